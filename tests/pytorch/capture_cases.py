"""Models that need ``add_graph``'s retries, captured in a process of their own; prints JSON.

    python -m tests.pytorch.capture_cases OUTDIR
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path


def main(outdir: Path) -> dict:
    import torch
    from torch import nn

    from tb_graph_plugin.torch import CaptureError, add_graph

    class Result:  # an output type pytree does not know
        def __init__(self, scores, features):
            self.scores, self.features = scores, features

    class CustomOutput(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(4, 4)
            self.head = nn.Linear(4, 2)

        def forward(self, x, scale):
            f = torch.relu(self.body(x)) * scale
            return Result(self.head(f), f)

    class DataDependent(nn.Module):  # torch.export refuses the branch on a value; a JIT trace takes it
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            y = self.fc(x)
            n = int((y > 0).sum().item())
            return y.repeat(1, n + 1)  # the output's shape depends on the data

    class Broken(nn.Module):
        def forward(self, x):
            raise ValueError("this model cannot run")

    out: dict = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        g = add_graph(str(outdir / "custom_output"), CustomOutput(), (torch.rand(2, 4),), {"scale": torch.rand(2, 4)})
        out["custom_output"] = {"io": [n.name for n in g.node if n.op == "IO Node"],
                                "ops": sorted(n.name for n in g.node if n.op.startswith("aten::"))}
        g = add_graph(str(outdir / "data_dependent"), DataDependent(), (torch.rand(2, 4),))
        out["data_dependent"] = {"ops": len(g.node), "ops_types": sorted({n.op for n in g.node})}
    out["warnings"] = [str(w.message) for w in caught if "tb_graph_plugin" in str(w.message)]
    try:
        add_graph(str(outdir / "broken"), Broken(), (torch.rand(2, 4),))
        out["broken"] = None
    except CaptureError as e:
        out["broken"] = str(e)
    out["broken_dir_exists"] = (outdir / "broken").exists()
    return out


if __name__ == "__main__":
    sys.modules.setdefault("tensorboard.compat.notf", type(sys)("tensorboard.compat.notf"))
    print(json.dumps(main(Path(sys.argv[1]))))
