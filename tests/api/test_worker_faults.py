"""Worker faults: a crashed job is retried once on a fresh worker; a graph that kills every worker
answers one clear 500; a silent or overdue worker is replaced and its queued jobs move.

Faults are injected deterministically through ``tb_graph_plugin.api.faults``: the workers'
environment names a fault plan (a JSON file the test writes once it knows the upload id), and a
worker kills (or stops) itself when it reaches the planned stage of the planned graph.
"""

from __future__ import annotations

import json
import os
import time

import pytest

from tb_graph_plugin.api import faults
from tb_graph_plugin.api.workers import JobFailed, WorkerPool
from tests.api.test_search_linear import graph_bytes
from tests.tb_app import OURS, TbApp


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    """The fault plan's path, in the environment of every worker started in this module."""
    path = str(tmp_path_factory.mktemp("faults") / "plan.json")
    with open(path, "w") as f:
        json.dump({"rules": []}, f)
    old = os.environ.get(faults.ENV_VAR)
    os.environ[faults.ENV_VAR] = path
    yield path
    if old is None:
        del os.environ[faults.ENV_VAR]
    else:
        os.environ[faults.ENV_VAR] = old


def _set_rules(plan, *rules):
    with open(plan, "w") as f:
        json.dump({"rules": list(rules)}, f)
    if os.path.exists(plan + ".ledger"):
        os.remove(plan + ".ledger")


@pytest.fixture(scope="module")
def app(plan, tmp_path_factory):
    app = TbApp(tmp_path_factory.mktemp("empty_logdir"), workers=2)
    yield app
    app.ours.pool.close()


def _upload(app, names) -> dict:
    response = app.post(OURS + "/upload", graph_bytes(names), filename="g.pb")
    assert response.status_code == 200, response.get_data(as_text=True)
    return {k: v for k, v in response.get_json()["graph"].items() if v is not None}


def test_worker_killed_in_layout_is_retried_and_the_scene_succeeds(app, plan):
    ref = _upload(app, [f"retry/layer{i}/op" for i in range(12)])
    _set_rules(plan, {"stage": "layout", "graph": ref["tag"], "times": 1})
    restarted = app.ours.pool.restarted
    scene = app.json(OURS + "/scene", wait="60", expanded="[]", **ref)
    assert [n["name"] for n in scene["nodes"]] == ["retry"]
    assert faults.crashes(plan) == [0]  # the worker did die once, in layout
    assert app.ours.pool.restarted == restarted + 1 and app.ours.pool.retried >= 1


def _without_request_id(error: str) -> str:
    """A 500's message less its request id, which each answer has its own of (``api/failures``)."""
    head, sep, _ = error.rpartition(" (request id ")
    assert sep, error
    return head


def test_graph_that_crashes_every_worker_gets_one_clear_500(app, plan):
    ref = _upload(app, [f"poison/layer{i}/op" for i in range(12)])
    healthy = _upload(app, [f"fine/layer{i}/op" for i in range(12)])
    _set_rules(plan, {"stage": "hierarchy", "graph": ref["tag"]})  # every time
    response = app.get(OURS + "/scene", wait="60", expanded="[]", **ref)
    assert response.status_code == 500
    error = response.get_json()["error"]
    assert error.startswith("scene failed: the worker process died in stage 'hierarchy' (exit codes -9, then -9)")
    assert "not retried again" in error
    assert faults.crashes(plan) == [0, 0]  # two workers, no more

    # The graph is not tried again: any job on it answers the same 500 at once, nothing dies.
    t0 = time.monotonic()
    again = app.get(OURS + "/node", wait="60", name="poison", **ref)
    assert again.status_code == 500 and _without_request_id(again.get_json()["error"]) == _without_request_id(error)
    assert time.monotonic() - t0 < 1.0 and faults.crashes(plan) == [0, 0]

    # The pool still serves other graphs.
    assert app.json(OURS + "/scene", wait="60", expanded="[]", **healthy)["nodes"]


def _pool_payload(names):
    blob = graph_bytes(names)
    return lambda: {"graph": blob, "hierarchy_options": {}}


def test_silent_worker_is_replaced_and_its_jobs_run_elsewhere(plan):
    """A worker that stops (SIGSTOP, planned at the ``search`` stage) answers no heartbeat: it is
    replaced within a few seconds, not after the job time limit, and its jobs (the one it ran,
    retried, and the ones queued behind it) complete on the other workers."""
    pool = WorkerPool(n_workers=2, heartbeat_timeout_s=1.0)
    try:
        load = _pool_payload([f"quiet/n{i}" for i in range(50)])
        warm = pool.submit("warm", "node", {"name": "quiet/n0"}, "g", load)
        assert warm.wait(60) and warm.value()
        victim_pids = set(pool.workers())
        _set_rules(plan, {"stage": "search", "graph": "'g'", "times": 1, "action": "stop"})
        t0 = time.monotonic()
        jobs = [pool.submit(("s", q), "search", {"q": q, "op": None}, "g", load) for q in ("n1", "n2", "n3", "n4")]
        for job in jobs:
            assert job.wait(30), job.wire()
            assert json.loads(job.value())["hits"]
        assert time.monotonic() - t0 < 15  # heartbeat timeout (1 s) + a fresh worker's start
        assert faults.crashes(plan) == [0] and pool.restarted == 1
        assert len(victim_pids - set(pool.workers())) == 1
    finally:
        pool.close()


def test_stage_past_its_budget_replaces_the_worker_and_fails_the_job(plan):
    pool = WorkerPool(n_workers=1, stage_budgets_s={"layout": 1.0})
    try:
        load = _pool_payload([f"slow/n{i}" for i in range(20)])
        _set_rules(plan, {"stage": "layout", "graph": "'stuck'", "action": "stop"})
        args = {"graph": {"run": "r", "tag": "t", "kind": "op", "step": None}, "expanded": [],
                "extract": True, "float": True}
        stuck = pool.submit("stuck", "scene", args, "stuck", load)
        queued = pool.submit("after", "node", {"name": "slow/n1"}, "other", load)  # waits behind it
        assert stuck.wait(30)
        with pytest.raises(JobFailed, match=r"scene failed: stage 'layout' ran past its budget of 1 s"):
            stuck.value()
        assert queued.wait(30) and json.loads(queued.value())["name"] == "slow/n1"
        assert pool.restarted == 1
    finally:
        pool.close()


def test_worker_past_its_memory_share_with_two_graphs_is_recycled_and_keeps_serving():
    """``worker_graph_bytes``: a worker whose RSS grew past its share of
    ``--graph_explorer_cache_mb`` while it holds two graphs is replaced once idle (its memory goes
    back to the system); with one graph it keeps it (the graph in use, bigger than the share)."""
    pool = WorkerPool(n_workers=1, worker_graph_bytes=1)  # any graph is over the share
    try:
        load_g = _pool_payload([f"mem/n{i}" for i in range(2000)])
        load_h = _pool_payload([f"other/n{i}" for i in range(2000)])
        first = pool.submit("first", "node", {"name": "mem/n1"}, "g", load_g)
        assert first.wait(60) and first.value()
        seen = pool.workers()
        again = pool.submit("again", "node", {"name": "mem/n3"}, "g", load_g)
        assert again.wait(60) and json.loads(again.value())["name"] == "mem/n3"
        time.sleep(0.3)  # recycling would be asynchronous: give it time to show
        assert pool.restarted == 0 and pool.workers() == seen  # one graph: kept
        second = pool.submit("second", "node", {"name": "other/n2"}, "h", load_h)
        assert second.wait(60) and json.loads(second.value())["name"] == "other/n2"
        deadline = time.monotonic() + 30
        while pool.workers() == seen and time.monotonic() < deadline:
            time.sleep(0.05)
        assert pool.restarted == 1 and pool.workers() != seen and len(pool.workers()) == 1
        third = pool.submit("third", "node", {"name": "mem/n4"}, "g", load_g)
        assert third.wait(60) and json.loads(third.value())["name"] == "mem/n4"
    finally:
        pool.close()
