"""The worker pool: work off the request thread, joined jobs, time limits and crashes recovered."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from tb_graph_plugin import wire
from tb_graph_plugin.api import faults, worker_link
from tb_graph_plugin.api.workers import JobFailed, WorkerPool
from tests.tb_app import OURS, TbApp


@pytest.fixture(scope="module")
def app(real_logs):
    app = TbApp(real_logs.get("torch_cnn"))
    yield app
    app.ours.pool.close()


def _payload(app, tag="__run_graph__"):
    from tensorboard import context

    graph = app.ours._store.graph_def(context.RequestContext(), "", wire.GraphRef("torch_cnn", tag, wire.GraphKind.OP))
    return lambda: {"graph": graph.SerializeToString(), "hierarchy_options": {}}


def test_search_and_node_answer_through_workers(app):
    hits = app.json(OURS + "/search", run="torch_cnn", q="conv", wait="30")["hits"]
    assert hits and all("conv" in f"{h['name']} {h['label']} {h['op']}".lower() for h in hits)  # ignoring case
    op_hit = next(h for h in hits if h["kind"] == "op")
    details = app.json(OURS + "/node", run="torch_cnn", name=op_hit["name"], wait="30")
    assert details["name"] == op_hit["name"] and details["op"] == op_hit["op"]


def test_bad_requests_fail_with_their_cause(app):
    response = app.get(OURS + "/search", run="torch_cnn", q="(", wait="30")
    assert response.status_code == 400 and "bad search regex '('" in response.get_json()["error"]
    response = app.get(OURS + "/node", run="torch_cnn", name="no/such/node", wait="30")
    assert response.status_code == 404 and "no node 'no/such/node'" in response.get_json()["error"]
    response = app.get(OURS + "/search", run="torch_cnn")
    assert response.status_code == 400 and "search needs `q`" in response.get_json()["error"]
    response = app.get(OURS + "/job", id="nope")
    assert response.status_code == 404


def test_slow_job_answers_202_then_its_state(app):
    app.ours.pool.close()  # a fresh pool, so the first job must start workers and build
    app.ours.pool.__init__(n_workers=1)
    response = app.get(OURS + "/search", run="torch_cnn", q="Conv", wait="0")
    assert response.status_code == 202
    job = response.get_json()
    assert job["state"] == "running" and job["job_id"]
    deadline = time.monotonic() + 60
    while job["state"] == "running" and time.monotonic() < deadline:
        time.sleep(0.1)
        job = app.json(OURS + "/job", id=job["job_id"])
    assert job["state"] == "done" and job["progress"] == 1.0
    again = app.get(OURS + "/search", run="torch_cnn", q="Conv", wait="0")
    assert again.status_code == 200  # the finished result is cached


def test_job_long_poll_answers_when_the_job_ends(app):
    app.ours.pool.close()
    app.ours.pool.__init__(n_workers=1)
    job = app.get(OURS + "/search", run="torch_cnn", q="Relu", wait="0").get_json()
    assert job["state"] == "running"
    t0 = time.monotonic()
    polls = 0
    while job["state"] == "running":
        job = app.json(OURS + "/job", id=job["job_id"], wait="10")
        polls += 1
    assert job["state"] == "done"
    assert polls == 1  # one long poll covered the whole build (cold worker start included)
    assert time.monotonic() - t0 < 10  # it answered when the job ended, not after the wait


def test_job_wait_must_be_a_number(app):
    response = app.get(OURS + "/job", id="0123456789ab", wait="soon")
    assert response.status_code == 400
    assert "query parameter `wait` must be a number >= 0" in response.get_json()["error"]


def test_identical_requests_join_one_job(app):
    pool = WorkerPool(n_workers=1)
    try:
        first = pool.submit("k", "search", {"q": "a", "op": None}, "g", _payload(app))
        second = pool.submit("k", "search", {"q": "a", "op": None}, "g", _payload(app))
        assert first is second
        assert first.wait(60) and first.value()
    finally:
        pool.close()


def test_job_past_time_limit_fails_and_pool_recovers(app):
    pool = WorkerPool(n_workers=1, job_timeout_s=0.001)
    try:
        handle = pool.submit("slow", "search", {"q": "a", "op": None}, "g", _payload(app))
        assert handle.wait(60)
        with pytest.raises(JobFailed, match=r"ran past the time limit of 0.001 s"):
            handle.value()
        pool.job_timeout_s = 120
        retry = pool.submit("slow", "search", {"q": "a", "op": None}, "g", _payload(app))
        assert retry is not handle  # a transient failure is not cached
        assert retry.wait(60) and "hits" in retry.value()
        assert pool.restarted >= 1
    finally:
        pool.close()


@pytest.fixture
def fault_plan(tmp_path, monkeypatch):
    """A fault plan (``api/faults.py``) in the environment the pool's workers start with."""
    path = str(tmp_path / "plan.json")
    monkeypatch.setenv(faults.ENV_VAR, path)

    def set_rules(*rules):
        with open(path, "w") as f:
            json.dump({"rules": list(rules)}, f)
        return path

    set_rules()
    return set_rules


def _warm_pool(app):
    pool = WorkerPool(n_workers=1)
    warm = pool.submit("warm", "search", {"q": "a", "op": None}, "g", _payload(app))
    assert warm.wait(60) and warm.value()
    return pool, pool._workers[0]


def test_worker_killed_while_idle_is_replaced(app, fault_plan):
    pool, victim = _warm_pool(app)
    try:
        os.kill(victim.process.pid, signal.SIGKILL)  # no job is running or queued
        deadline = time.monotonic() + 30
        while pool.restarted == 0 and time.monotonic() < deadline:
            time.sleep(0.05)  # the watchdog notices within its 0.25 s period
        assert pool.restarted == 1 and pool._workers[0] is not victim
        after = pool.submit("after", "search", {"q": "c", "op": None}, "g", _payload(app))
        assert after.wait(60) and "hits" in after.value()
        assert pool.retried == 0 and pool.restarted == 1
    finally:
        pool.close()


def test_worker_killed_during_a_job_is_replaced_and_the_job_retried(app, fault_plan):
    plan = fault_plan({"stage": "search", "graph": "'g2'", "times": 1})  # once, while the job runs
    pool, victim = _warm_pool(app)
    try:
        handle = pool.submit("crash", "search", {"q": "b", "op": None}, "g2", _payload(app))
        assert handle.wait(60)
        assert handle.error is None and "hits" in handle.value()  # retried once on the fresh worker
        assert faults.crashes(plan) == [0]
        assert pool._workers[0] is not victim and pool.restarted == 1 and pool.retried == 1
    finally:
        pool.close()


def test_worker_killed_twice_fails_its_job_and_is_replaced(app, fault_plan):
    plan = fault_plan({"stage": "search", "graph": "'g2'"})  # every time the job reaches search
    pool, victim = _warm_pool(app)
    try:
        handle = pool.submit("crash", "search", {"q": "b", "op": None}, "g2", _payload(app))
        assert handle.wait(60)
        with pytest.raises(JobFailed, match=r"search failed: the worker process died in stage 'search' "
                                            r"\(exit codes -9, then -9\), on 2 workers in a row"):
            handle.value()
        assert faults.crashes(plan) == [0, 0]
        after = pool.submit("after", "search", {"q": "c", "op": None}, "g", _payload(app))
        assert after.wait(60) and "hits" in after.value()  # the pool serves other graphs
        assert pool._workers[0] is not victim and pool.restarted == 2 and pool.retried == 1
    finally:
        pool.close()


def test_worker_keeps_max_graphs_and_asks_again_for_an_evicted_one(app):
    """``worker_main`` in-process: an LRU of built graphs; an evicted graph answers need_graph."""
    import gc

    from tb_graph_plugin.api.worker_process import worker_main

    payload = _payload(app)()
    args = {"q": "Conv", "op": None}
    inbox = [
        ("job", "main", "j1", "g1", payload, "search", args, 1),
        ("job", "main", "j2", "g2", payload, "search", args, 1),  # evicts g1 (max_graphs=1)
        ("job", "main", "j3", "g1", None, "search", args, 1),  # g1 is gone: the worker asks for it
        ("job", "main", "j4", "g2", None, "search", args, 1),  # g2 is kept: answered without the graph
        ("ping", 7),
        None,
    ]
    sent = []
    worker_main(lambda: inbox.pop(0), sent.append)
    finals = [m for m in sent if m[0] in ("done", "failed", "need_graph")]
    assert [(m[0], m[1]) for m in finals] == [("done", "j1"), ("done", "j2"), ("need_graph", "j3"), ("done", "j4")]
    assert any(m[:2] == ("pong", 7) and m[2] > 0 for m in sent)  # heartbeat answered, with the RSS
    assert gc.get_freeze_count() > 0  # built graphs are moved out of the collector's generations
    gc.unfreeze()


def test_quick_lane_answers_while_the_main_lane_builds(app):
    """A ``node`` job on a built graph runs on the quick lane while the main lane is busy: the
    worker answers it before the build queued ahead of it finishes."""
    import threading

    from tb_graph_plugin.api.worker_process import worker_main

    payload = _payload(app)()
    release = threading.Event()
    messages = [
        ("job", "main", "build1", "g1", payload, "search", {"q": "Conv", "op": None}, 4),
        "wait_for_build1",
        ("job", "main", "build2", "g2", payload, "scene", {"graph": {"run": "torch_cnn", "tag": "t", "kind": "op", "step": None},
                                                         "expanded": [], "extract": True, "float": True}, 4),
        ("job", "quick", "quick1", "g1", None, "node", {"name": "input"}, 4),
        ("job", "quick", "quick2", "g3", None, "node", {"name": "input"}, 4),  # not built here
        None,
    ]
    sent = []

    def send(message):
        sent.append(message)
        if message[:2] == ("done", "build1"):
            release.set()

    def receive():
        message = messages.pop(0)
        if message == "wait_for_build1":
            assert release.wait(60)
            return ("ping", 1)
        return message

    worker_main(receive, send)
    finals = [(m[0], m[1]) for m in sent if m[0] in ("done", "failed", "need_graph")]
    assert ("need_graph", "quick2") in finals
    assert finals.index(("failed", "quick1") if ("failed", "quick1") in finals else ("done", "quick1")) < finals.index(("done", "build2"))


def test_node_of_a_copy_drawn_beside_another_node(app):
    """Scene names ``node@beside`` (an embedding shown beside a second consumer, a floated
    parameter's copy) open the info pane of ``node`` (regression: they answered 404)."""
    hits = app.json(OURS + "/search", run="torch_cnn", q="conv1", wait="30")["hits"]
    op, other = [h["name"] for h in hits if h["kind"] == "op"][:2]
    details = app.json(OURS + "/node", run="torch_cnn", name=f"{op}@{other}", wait="30")
    assert details["name"] == op
    response = app.get(OURS + "/node", run="torch_cnn", name=f"nope@{op}", wait="30")
    assert response.status_code == 404
    assert response.get_json()["error"] == f"Not found: no node 'nope@{op}' in this graph"


@pytest.mark.skipif(not hasattr(__import__("fcntl"), "F_GETPIPE_SZ"), reason="F_GETPIPE_SZ is Linux's (Python >= 3.10)")
def test_the_pipe_to_a_worker_holds_a_mebibyte():
    """A graph's encoding crosses to the worker in 1 MiB reads, not the 64 KiB of a default pipe:
    a worker busy on its other lane (or importing) takes the GIL back once per read, and a
    1M-op graph's 165 MB took seconds in 64 KiB reads beside a busy thread."""
    import fcntl

    from tb_graph_plugin.api.worker_link import PIPE_BYTES, WorkerLink

    with open("/proc/sys/fs/pipe-max-size") as f:
        if int(f.read()) < PIPE_BYTES:
            pytest.skip("this system caps pipes below 1 MiB")
    link = WorkerLink(0, lambda *a: None, 1)
    try:
        assert fcntl.fcntl(link.process.stdin.fileno(), fcntl.F_GETPIPE_SZ) >= PIPE_BYTES
    finally:
        link.stop()


def test_a_memoryview_crosses_to_the_worker_as_its_bytes():
    """A graph cut out of the data provider's blob (a memoryview) is written from where it lies
    and loaded as ``bytes`` (``worker_link._Pickler``): pickle alone refuses a memoryview."""
    import io
    import pickle

    from tb_graph_plugin.api.worker_link import _Pickler

    blob = bytes(range(256)) * 4096
    sink = io.BytesIO()
    _Pickler(sink, protocol=pickle.HIGHEST_PROTOCOL).dump(("job", {"graph": memoryview(blob)[7:-9]}))
    message = pickle.loads(sink.getvalue())
    assert type(message[1]["graph"]) is bytes and message[1]["graph"] == blob[7:-9]
    with pytest.raises(TypeError):
        pickle.dumps(memoryview(blob), protocol=pickle.HIGHEST_PROTOCOL)


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="RSS is read from /proc")
def test_an_idle_worker_touches_its_prefault_and_gives_it_back_after_its_first_job(app):
    """``prefault_bytes``: an idle worker's resident memory grows by what it touches for its first
    build (``api.prefault``), over the baseline it said once ready; after that first job its
    pins are dropped and the free heap trimmed, so it holds little more than its graph."""
    pool = WorkerPool(n_workers=1, prefault_bytes=128 << 20)
    try:
        pool.prestart()
        worker, = _wait_for_prefaults(pool, 1)
        touched = worker.rss
        handle = pool.submit("first", "search", {"q": "conv", "op": None}, "g", _payload(app))
        assert handle.wait(60) and handle.value()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and touched - worker.rss < 64 << 20:
            time.sleep(0.1)  # pongs bring the RSS after the trim
        assert touched - worker.rss >= 64 << 20, (touched >> 20, worker.rss >> 20)
    finally:
        pool.close()


def _wait_for_prefaults(pool, n, grown=100 << 20, timeout_s=60):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        workers = list(pool._workers)
        if len(workers) == n and all(w.base_rss and w.rss - w.base_rss > grown for w in workers):
            return workers
        time.sleep(0.1)
    raise AssertionError(f"the idle workers touched no prefault: {[(w.base_rss >> 20, w.rss >> 20) for w in pool._workers]}")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="RSS is read from /proc")
def test_a_graph_past_its_share_makes_the_idle_workers_give_their_prefault_back(app):
    """The memory budget is shared: once a worker's graph is past its share, the heap the other
    (idle) workers touched for a first build goes back to the system."""
    pool = WorkerPool(n_workers=2, prefault_bytes=128 << 20, worker_graph_bytes=1,  # any graph is past it
                      prepared_workers=2)
    try:
        pool.prestart()
        workers = _wait_for_prefaults(pool, 2)
        touched = {w.index: w.rss for w in workers}
        handle = pool.submit("first", "search", {"q": "conv", "op": None}, "g", _payload(app))
        assert handle.wait(60) and handle.value()
        idle = next(w for w in workers if "g" not in w.graphs)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and touched[idle.index] - idle.rss < 64 << 20:
            time.sleep(0.1)
        assert touched[idle.index] - idle.rss >= 64 << 20, (touched[idle.index] >> 20, idle.rss >> 20)
    finally:
        pool.close()


needs_memfd = pytest.mark.skipif(not worker_link.SHARED_MEMORY, reason="shared memory needs memfd and /proc (Linux)")


def _shares(monkeypatch, fake_fd=False):
    """Every graph goes in shared memory (``SHARED_MIN_BYTES`` 1); the blobs made, listed. With
    ``fake_fd``, each names a descriptor the worker cannot map (``/dev/null``)."""
    made = []
    real = worker_link.share

    def share(data):
        shared = real(data)
        if shared is not None and fake_fd:
            shared.close()
            shared.fd = os.open(os.devnull, os.O_RDONLY)
        made.append(shared)
        return shared

    monkeypatch.setattr(worker_link, "SHARED_MIN_BYTES", 1)
    monkeypatch.setattr(worker_link, "share", share)
    return made


@needs_memfd
def test_a_big_graph_goes_in_shared_memory_which_is_closed_once_the_worker_took_it(app, monkeypatch):
    made = _shares(monkeypatch)
    pool = WorkerPool(n_workers=1)
    try:
        handle = pool.submit("first", "search", {"q": "conv", "op": None}, "g", _payload(app))
        assert handle.wait(60) and json.loads(handle.value())["hits"]
        shared, = made
        assert shared is not None and shared.fd == -1 and handle.shared is None  # closed
        assert pool.share_graphs
    finally:
        pool.close()


@needs_memfd
def test_a_worker_that_cannot_map_a_shared_graph_gets_it_through_its_pipe(app, monkeypatch):
    """The worker says ``need_graph ... unshared``; the pool sends that job, and every later one,
    through the pipe, and the job answers."""
    made = _shares(monkeypatch, fake_fd=True)
    pool = WorkerPool(n_workers=1)
    try:
        handle = pool.submit("first", "search", {"q": "conv", "op": None}, "g", _payload(app))
        assert handle.wait(60) and json.loads(handle.value())["hits"]
        assert len(made) == 1 and not pool.share_graphs
        later = pool.submit("other", "search", {"q": "relu", "op": None}, "g2", _payload(app))
        assert later.wait(60) and later.value()
        assert len(made) == 1
    finally:
        pool.close()


def test_the_reader_thread_warms_its_heap_when_the_workers_start(app):
    """``read_heap_bytes``: starting the workers also has the thread that reads graphs touch that
    much heap (``prefault.warm_read_heap``), once; the first job's read runs on that thread."""
    pool = WorkerPool(n_workers=1, read_heap_bytes=4 << 20)
    try:
        assert pool.read_heap_warmed is None
        pool.prestart()
        assert pool.read_heap_warmed.result(10) == 4 << 20
        warmed = pool.read_heap_warmed
        readers = set(pool._readers._threads)
        handle = pool.submit("first", "search", {"q": "conv", "op": None}, "g", _payload(app))
        assert handle.wait(60) and handle.value()
        assert pool.read_heap_warmed is warmed and set(pool._readers._threads) == readers
    finally:
        pool.close()


def test_the_first_worker_prepares_for_a_first_job_and_the_others_only_import(app):
    """By default only worker 0, where a first job goes while it is idle, touches a prefault (and
    makes the late imports): the others are started ``lean``, and so is one started in their
    place; a first job goes to worker 0."""
    pool = WorkerPool(n_workers=2, prefault_bytes=64 << 20)
    try:
        pool.prestart()
        first, other = pool._workers
        assert "lean" not in first.process.args and first.holds_prefault
        assert other.process.args[-1] == "lean" and not other.holds_prefault
        handle = pool.submit("first", "search", {"q": "conv", "op": None}, "g", _payload(app))
        assert handle.wait(60) and handle.value()
        assert "g" in first.graphs and "g" not in other.graphs
        pool._replace(other, None)
        assert pool._workers[1].process.args[-1] == "lean"
    finally:
        pool.close()


def test_a_small_graph_keeps_the_pipe():
    assert worker_link.share(b"x" * 1000) is None  # under SHARED_MIN_BYTES
    assert worker_link.share(None) is None


@needs_memfd
def test_a_big_graph_maps_back_as_its_bytes():
    data = os.urandom(1 << 16) * ((worker_link.SHARED_MIN_BYTES >> 16) + 1)
    shared = worker_link.share(memoryview(data))
    try:
        func, args = shared.__reduce__()
        view = func(*args)  # what the worker's unpickling does (here in this process)
        assert view.readonly and view == data
        view.release()
    finally:
        shared.close()
        shared.close()  # twice: a no-op
    assert worker_link.map_shared(os.getpid(), shared.fd, len(data)) is None  # closed: cannot be mapped
