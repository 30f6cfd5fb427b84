"""``tb-graph layout``: the scene for an expansion state, without a server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tb_graph_plugin import cli

DEMO = Path(__file__).resolve().parents[1] / "demo_logs"


def _run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_layout_json_children_inside_expanded_parent(capsys):
    code, out, _ = _run(capsys, "layout", str(DEMO / "torch_cnn"), "--expand", "ResNetLike")
    assert code == 0
    scene = json.loads(out)
    nodes = {n["name"]: n for n in scene["nodes"]}
    parent = nodes["ResNetLike"]
    assert parent["expanded"]
    children = [n for n in scene["nodes"] if n["parent"] == "ResNetLike"]
    assert len(children) >= 5
    for child in children:
        assert parent["x"] - parent["width"] / 2 <= child["x"] - child["width"] / 2
        assert child["x"] + child["width"] / 2 <= parent["x"] + parent["width"] / 2
        assert parent["y"] - parent["height"] / 2 <= child["y"] - child["height"] / 2
        assert child["y"] + child["height"] / 2 <= parent["y"] + parent["height"] / 2
    assert all(len(e["points"]) >= 2 for e in scene["edges"])


@pytest.mark.parametrize("fmt, marker", [("svg", "<svg"), ("dot", "digraph")])
def test_layout_svg_and_dot(capsys, fmt, marker):
    code, out, _ = _run(capsys, "layout", str(DEMO / "tf1_graph"), "--format", fmt)
    assert code == 0 and marker in out


def test_layout_unknown_group_is_a_clear_error(capsys):
    code, _, err = _run(capsys, "layout", str(DEMO / "torch_cnn"), "--expand", "no_such_group")
    assert code == 2
    assert "cannot expand 'no_such_group': no such group" in err
