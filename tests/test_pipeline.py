"""pipeline.Pipeline: order, declared conditions, one Timings, progress, stop_after."""

from __future__ import annotations

import logging

import pytest

from tb_graph_plugin.pipeline import Pipeline, Step, Timings


def _pipeline():
    return Pipeline("t", [
        Step("a", lambda s: s.append("a")),
        Step("b", lambda s: s.append("b"), when=lambda s: "skip_b" not in s),
        Step("c", lambda s: s.append("c")),
    ])


def test_runs_steps_in_order_and_times_each_into_one_timings():
    t = Timings()
    assert _pipeline().run([], timings=t) == ["a", "b", "c"]
    assert list(t) == ["a", "b", "c"] and all(v >= 0 for v in t.values())
    _pipeline().run([], timings=t)  # a second run adds up
    assert list(t) == ["a", "b", "c"]


def test_a_step_whose_condition_fails_is_skipped_and_not_timed():
    t = Timings()
    assert _pipeline().run(["skip_b"], timings=t) == ["skip_b", "a", "c"]
    assert "b" not in t


def test_stop_after_and_unknown_step():
    assert _pipeline().run([], stop_after="b") == ["a", "b"]
    with pytest.raises(ValueError, match="no step 'x'"):
        _pipeline().run([], stop_after="x")
    with pytest.raises(ValueError, match="unique"):
        Pipeline("dup", [Step("a", print), Step("a", print)])


def test_progress_reports_each_run_step_within_the_span():
    seen = []
    _pipeline().run(["skip_b"], progress=lambda name, f: seen.append((name, round(f, 3))), span=(0.2, 0.8))
    assert seen == [("a", 0.2), ("c", 0.6)]


def test_timings_logged_at_debug(caplog):
    with caplog.at_level(logging.DEBUG, logger="tb_graph_plugin.pipeline"):
        _pipeline().run([])
    assert any(r.message.startswith("t: a=") for r in caplog.records)


def test_worker_build_stages_are_the_graph_state_pipeline():
    from tb_graph_plugin.api import tasks, workers

    # budgets and poisoning key on these names; a first view's partial Hierarchy is built by the
    # scene task before BUILD's ``hierarchy`` step has run (``tasks._early_first_view``)
    assert [s for s in workers.BUILD_STAGES if s != "first_view_hierarchy"] == tasks.BUILD.names
    assert "first_view_hierarchy" in workers.BUILD_STAGES

