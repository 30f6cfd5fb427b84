"""Warm-up: the graph the tab opens first is built before anyone asks for it (a fast first paint)."""

from __future__ import annotations

import time

import pytest

from tb_graph_plugin import wire
from tb_graph_plugin.api.routes import scene_args
from tests.tb_app import OURS, TbApp


def _wait_warm(app: TbApp, timeout_s: float = 120.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        jobs = app.ours.warmup.jobs
        if jobs and jobs[-1].done.is_set():
            return jobs[-1]
        time.sleep(0.05)
    raise AssertionError("warm-up did not finish")


@pytest.mark.parametrize(
    "kind, default",
    [
        ("tf2_keras_trace", None),  # checked below against the listing's first op graph
        ("keras_callback", ("train", "keras", "conceptual")),  # only a conceptual graph: open that
    ],
)
def test_listing_default_is_what_warmup_builds(real_logs, kind, default):
    app = TbApp(real_logs.get(kind), warmup=True)
    try:
        listing = app.json(OURS + "/graphs")
        ref = listing["default"]
        if default is not None:
            assert (ref["run"], ref["tag"], ref["kind"]) == default
        else:
            first = listing["runs"][0]["tags"][0]
            assert ref["kind"] == "op" and ref["tag"] == first["tag"] and ref["step"] is None
        handle = _wait_warm(app)
        assert handle.state == wire.JobState.DONE, handle.wire()
        # The frontend's first request is the warm job itself: answered at once, nothing rebuilt.
        graph_ref = wire.GraphRef(ref["run"], ref["tag"], wire.GraphKind(ref["kind"]))
        again = app.ours._routes.submit(None, "", graph_ref, "scene", scene_args(graph_ref, [], first_view=True))
        assert again is handle
        response = app.get(OURS + "/scene", run=ref["run"], tag=ref["tag"], kind=ref["kind"], wait="0")
        assert response.status_code == 200
        assert response.get_json()["graph"]["run"] == ref["run"]
    finally:
        app.ours.warmup.stop()
        app.ours.pool.close()


@pytest.mark.parametrize("warmup", [True, False])
def test_no_graph_data_means_no_warmup_and_no_workers(tmp_path, warmup):
    app = TbApp(tmp_path, warmup=warmup)
    try:
        assert app.json(OURS + "/graphs") == {"runs": [], "default": None, "data_location": str(tmp_path),
                                              "version": wire.WIRE_VERSION}
        app.ours.warmup.poll() if warmup else app.ours.warmup.prestart_when_listed()
        time.sleep(0.5)
        assert app.ours.warmup.jobs == [] and app.ours.pool.workers() == []
    finally:
        app.ours.warmup.stop()
        app.ours.pool.close()


def test_warmup_flag_off_builds_nothing_until_the_tab_is_opened(real_logs):
    """``--graph_explorer_warmup=false``: no job before a page opens the tab, but the worker
    processes are started as soon as there is a graph to show (then the warm-up thread ends);
    the tab's module request (``/index.js``) starts the default graph's first view, and the
    page's own ``/scene`` joins that job instead of starting another."""
    app = TbApp(real_logs.get("torch_cnn"), warmup=False)
    try:
        app.ours.warmup._thread.join(10)
        assert not app.ours.warmup._thread.is_alive()
        assert len(app.ours.pool.workers()) == app.ours.pool.n_workers  # started, not asked for by a page
        assert app.ours.warmup.jobs == []
        assert app.get(OURS + "/graphs").status_code == 200
        assert app.ours.warmup.jobs == []  # listing the graphs opens nothing
        assert app.get(OURS + "/index.js").status_code == 200
        deadline = time.monotonic() + 10
        while not app.ours.warmup.jobs and time.monotonic() < deadline:
            time.sleep(0.01)
        (handle,) = app.ours.warmup.jobs
        ref = app.json(OURS + "/graphs")["default"]
        graph_ref = wire.GraphRef(ref["run"], ref["tag"], wire.GraphKind(ref["kind"]))
        assert app.ours._routes.submit(None, "", graph_ref, "scene", scene_args(graph_ref, [], first_view=True)) is handle
        response = app.get(OURS + "/scene", run=ref["run"], tag=ref["tag"], kind=ref["kind"], wait="10")
        assert response.status_code == 200 and handle.state == wire.JobState.DONE
        assert app.get(OURS + "/index.js").status_code == 200  # the page again: nothing new
        time.sleep(0.3)
        assert app.ours.warmup.jobs == [handle]
    finally:
        app.ours.pool.close()


def test_warmup_flag_off_thread_ends_once_a_page_started_the_workers(tmp_path):
    """No graph to show yet, the flag off: the thread keeps looking until a page's plugin
    listing starts the workers, then ends (it does not poll the listing for ever)."""
    app = TbApp(tmp_path, warmup=False)
    try:
        time.sleep(0.5)
        assert app.ours.warmup._thread.is_alive() and app.ours.pool.workers() == []
        assert app.get("/data/plugins_listing").status_code == 200
        app.ours.warmup._thread.join(5)
        assert not app.ours.warmup._thread.is_alive() and app.ours.pool.workers()
        assert app.ours.warmup.jobs == []
    finally:
        app.ours.pool.close()
