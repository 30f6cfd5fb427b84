"""The dot worker process lays out a graph of its own before its first source (``_dot_worker``)."""

from __future__ import annotations

import os
import time

import pytest

from tb_graph_plugin.layout import dot


def _loaded_libraries(pid: int) -> str:
    with open(f"/proc/{pid}/maps") as f:
        return f.read()


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads a process's mappings from /proc (Linux)")
def test_the_dot_worker_loads_graphviz_layout_before_its_first_source():
    """Graphviz's dot layout plugin is mapped in the worker before any source is sent: its first
    layout (import and plugin loading, tens of ms) is not paid by a graph's first view."""
    worker = dot._Worker()
    try:
        deadline = time.monotonic() + 20
        while "gvplugin_dot_layout" not in _loaded_libraries(worker.proc.pid):
            assert time.monotonic() < deadline, "the worker did not lay out its warm-up graph"
            assert worker.alive()
            time.sleep(0.05)
        answer = worker.call("digraph G { n0 -> n1; n1 -> n2; }", timeout=20)
        assert set(answer["nodes"]) == {"n0", "n1", "n2"}
        assert answer["nodes"]["n0"][1] > answer["nodes"]["n2"][1]  # top to bottom, y up
    finally:
        worker.kill()


def test_the_warm_up_graph_is_written_as_the_layouts_are():
    """No labels, boxes of a fixed size, no arrowheads: what ``to_dot_source`` writes (a labelled
    warm-up set up Graphviz's fonts, which slowed every later layout)."""
    from tb_graph_plugin.layout import _dot_worker
    from tb_graph_plugin.layout.model import LayoutEdge, LayoutGraph, LayoutNode, LayoutOptions

    src = dot.to_dot_source(LayoutGraph([LayoutNode("a", 10, 10), LayoutNode("b", 10, 10)],
                                        [LayoutEdge("a", "b")]), LayoutOptions())
    for statement in (line.strip().rstrip(";") for line in src.splitlines()):
        if statement.startswith(("node [", "edge [")):
            assert statement in _dot_worker.WARM_UP
    answer = _dot_worker._answer(_dot_worker.WARM_UP)
    assert set(answer["nodes"]) == {"n0", "n1"}
