"""No request stalls (worker faults, ReDoS, memory) end to end, through a real ``tensorboard``
process with the plugin (this checkout).

- The ReDoS pattern ``(a+)+$`` against an uploaded graph holding a node named 36 ``a``s then
  ``!`` answers within 2 s, and the ``/scene`` of another graph asked right after answers at once
  (one worker holds both: before RE2 it waited for the 300 s job time limit).
- A worker killed in ``layout`` (test-only fault plan, deterministic) is retried: the user sees
  200; a graph whose build kills every worker answers one clear 500 naming the stage.
"""

from __future__ import annotations

import json
import time
import urllib.parse
import urllib.request

import pytest

from tb_graph_plugin.api import faults
from tests.api.test_search_linear import REDOS_NAME, graph_bytes
from tests.tensorboard_process import TensorBoardProcess

OURS = "/data/plugin/graph_explorer"

pytestmark = pytest.mark.slow


def _upload(tb, names) -> dict:
    request = urllib.request.Request(tb.url + OURS + "/upload?filename=g.pb", data=graph_bytes(names), method="POST")
    with urllib.request.urlopen(request, timeout=30) as r:
        graph = json.loads(r.read())["graph"]
    return {k: v for k, v in graph.items() if v is not None}


def _get(tb, path, **params):
    status, _, body = tb.get(OURS + path + "?" + urllib.parse.urlencode(params), timeout=60)
    return status, json.loads(body)


@pytest.fixture(scope="module")
def tb(tmp_path_factory, real_logs):
    plan = tmp_path_factory.mktemp("e2e15") / "plan.json"
    plan.write_text(json.dumps({"rules": []}))
    # A logdir with a graph, so that TensorBoard enables the tab; the tests use uploads.
    with TensorBoardProcess(real_logs.get("torch_cnn"), extra_args=["--graph_explorer_workers", "1"],
                            env={faults.ENV_VAR: str(plan)}) as tb:
        tb.plan = plan
        yield tb


def test_redos_search_answers_fast_and_the_next_scene_does_not_wait(tb):
    redos = _upload(tb, ["input", REDOS_NAME, "aaa", "out"])
    other = _upload(tb, [f"net/layer{i}/op" for i in range(30)])
    assert _get(tb, "/scene", wait="30", expanded="[]", **other)[0] == 200
    assert _get(tb, "/node", wait="30", name="input", **redos)[0] == 200

    t0 = time.monotonic()
    status, answer = _get(tb, "/search", q="(a+)+$", wait="10", **redos)
    assert time.monotonic() - t0 < 2.0
    assert status == 200 and [h["name"] for h in answer["hits"]] == ["aaa"] and answer["complete"]

    t0 = time.monotonic()
    status, scene = _get(tb, "/scene", wait="10", expanded=json.dumps(["net"]), **other)
    assert status == 200 and time.monotonic() - t0 < 2.0
    status, answer = _get(tb, "/search", q=r"(a)\1", wait="10", **redos)
    assert status == 400 and "invalid escape sequence" in answer["error"]


def test_killed_worker_is_retried_and_a_poison_graph_answers_one_500(tb):
    retried = _upload(tb, [f"retry/layer{i}/op" for i in range(12)])
    poison = _upload(tb, [f"poison/layer{i}/op" for i in range(12)])
    tb.plan.write_text(json.dumps({"rules": [
        {"stage": "layout", "graph": retried["tag"], "times": 1},
        {"stage": "parse", "graph": poison["tag"]},
    ]}))
    status, scene = _get(tb, "/scene", wait="60", expanded="[]", **retried)
    assert status == 200 and [n["name"] for n in scene["nodes"]] == ["retry"]
    assert faults.crashes(str(tb.plan)) == [0]

    status, answer = _get(tb, "/scene", wait="60", expanded="[]", **poison)
    assert status == 500
    assert answer["error"].startswith("scene failed: the worker process died in stage 'parse' (exit codes -9, then -9)")
    assert faults.crashes(str(tb.plan)) == [0, 1, 1]
    status, again = _get(tb, "/search", wait="60", q="poison", **poison)
    same = again["error"].rpartition(" (request id ")[0] == answer["error"].rpartition(" (request id ")[0]
    assert status == 500 and same and "(request id " in answer["error"] and again["request_id"] != answer["request_id"]
    assert faults.crashes(str(tb.plan)) == [0, 1, 1]
