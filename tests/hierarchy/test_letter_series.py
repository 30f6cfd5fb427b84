"""Block series whose index is a letter (issue 23 item 7).

torchvision's Inception3 names its four identical InceptionC modules ``Mixed_6b`` .. ``Mixed_6e``
and EfficientNet its blocks ``block2a`` .. ``block2c``: the index is a letter after a number.
A hand-written PyTorch model with torchvision's naming (``InceptionB`` ``Mixed_6a``, four
``InceptionC`` ``Mixed_6b..6e``, two ``InceptionE`` ``Mixed_7b..7c``) is written by torch's
``SummaryWriter.add_graph`` in a process of its own (torch stays out of this one).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tb_graph_plugin.cli import load_graph_def
from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import build_hierarchy
from tb_graph_plugin.hierarchy.model import SeriesNode
from tests.hierarchy.invariants import check_invariants

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]

_WRITER = """
import sys
sys.modules.setdefault("tensorboard.compat.notf", type(sys)("tensorboard.compat.notf"))
import torch
from torch import nn
from torch.utils.tensorboard import SummaryWriter

def conv(c_in, c_out, k):
    return nn.Sequential(nn.Conv2d(c_in, c_out, k, padding=k // 2), nn.ReLU())

class InceptionB(nn.Module):  # a different block before the run
    def __init__(self, c):
        super().__init__(); self.branch3x3 = conv(c, c, 3); self.pool = nn.MaxPool2d(3, 1, 1)
    def forward(self, x):
        return self.branch3x3(x) + self.pool(x)

class InceptionC(nn.Module):
    def __init__(self, c):
        super().__init__(); self.branch1x1 = conv(c, c, 1); self.branch7x7 = conv(c, c, 3); self.branch_pool = conv(c, c, 1)
    def forward(self, x):
        return torch.cat([self.branch1x1(x), self.branch7x7(x), self.branch_pool(x)], 1)[:, : x.shape[1]]

class InceptionE(nn.Module):
    def __init__(self, c):
        super().__init__(); self.branch1x1 = conv(c, c, 1); self.branch3x3 = conv(c, c, 3)
    def forward(self, x):
        return self.branch1x1(x) * self.branch3x3(x)

class Inception(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.Mixed_6a = InceptionB(c)
        self.Mixed_6b = InceptionC(c); self.Mixed_6c = InceptionC(c); self.Mixed_6d = InceptionC(c); self.Mixed_6e = InceptionC(c)
        self.Mixed_7b = InceptionE(c); self.Mixed_7c = InceptionE(c)
    def forward(self, x):
        for m in (self.Mixed_6a, self.Mixed_6b, self.Mixed_6c, self.Mixed_6d, self.Mixed_6e, self.Mixed_7b, self.Mixed_7c):
            x = m(x)
        return x

torch.manual_seed(0)
with SummaryWriter(sys.argv[1]) as w:
    w.add_graph(Inception().eval(), torch.rand(1, 4, 8, 8))
"""


def test_blocks_indexed_by_a_letter_form_a_series(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    subprocess.run([sys.executable, "-c", _WRITER, str(tmp_path / "inception")], cwd=REPO, env=env, check=True,
                   timeout=300, capture_output=True)
    h = build_hierarchy(build_slim_graph(load_graph_def(str(tmp_path / "inception"))))
    check_invariants(h)
    series = {g.label: g for g in h.walk_groups() if isinstance(g, SeriesNode)}
    assert "InceptionC[Mixed_6b-e]" in series, sorted(series)
    s = series["InceptionC[Mixed_6b-e]"]
    assert [h.label(m) for m in s.children] == [f"InceptionC[Mixed_6{x}]" for x in "bcde"]
    assert s.indices == [1, 2, 3, 4]  # a = 0
    parent = h.groups[s.parent - h.n_ops]
    labels = {h.label(c) for c in parent.children}
    assert "InceptionB[Mixed_6a]" in labels  # another block: not in the run
    assert {"InceptionE[Mixed_7b]", "InceptionE[Mixed_7c]"} <= labels  # two: fewer than block_series_min_size
