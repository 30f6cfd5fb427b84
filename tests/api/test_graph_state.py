"""The worker's GraphState leaves the garbage collector as it found it: off while a graph is
built and frozen (no full collection walks the new graph before the first answer), on again after,
also when the build fails."""

from __future__ import annotations

import gc

import pytest
from tensorboard import errors

from tb_graph_plugin.api import tasks
from tb_graph_plugin.cli import load_graph_def


def test_build_runs_with_the_collector_off_and_restores_it(real_logs, monkeypatch):
    blob = load_graph_def(str(real_logs["tf1_graph"])).SerializeToString()
    seen = []
    real_build = tasks.BUILD.run
    monkeypatch.setattr(tasks.BUILD, "run", lambda state, **kw: seen.append(gc.isenabled()) or real_build(state, **kw))
    gc.enable()
    gc.unfreeze()
    state = tasks.GraphState({"graph": blob, "what": "tf1_graph"}, lambda stage, fraction: None)
    assert seen == [False] and gc.isenabled()
    assert gc.get_freeze_count() > 0  # the built graph is out of the collector's generations
    assert state.hierarchy is None  # built after the first answer (a first view may not need it)
    gc.unfreeze()
    state.settle()
    assert state.hierarchy.n_ops > 0 and gc.isenabled() and gc.get_freeze_count() > 0
    gc.unfreeze()

    with pytest.raises(errors.InvalidArgumentError, match="malformed GraphDef"):
        tasks.GraphState({"graph": b"\x0a\xff", "what": "graph"}, lambda stage, fraction: None)
    assert gc.isenabled()
    gc.disable()  # a caller that had it off keeps it off
    try:
        tasks.GraphState({"graph": blob, "what": "tf1_graph"}, lambda stage, fraction: None)
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()
