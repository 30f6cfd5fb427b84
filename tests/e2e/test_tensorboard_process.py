"""End to end: ``tensorboard --logdir demo_logs`` with the installed plugin, both data providers.

Must show (stock compatibility): the plugin is listed and enabled at ``/data/plugins_listing`` beside the
built-in Graphs tab, and for every demo log our ``/info`` and ``/graph`` equal the stock ones -
under the Python multiplexer and under the Rust data server (``--load_fast=true``).
"""

from __future__ import annotations

import time
import urllib.parse
from pathlib import Path

import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2

from tests.tensorboard_process import TensorBoardProcess

DEMO_LOGS = Path(__file__).resolve().parents[2] / "demo_logs"
OURS = "/data/plugin/graph_explorer"
STOCK = "/data/plugin/graphs"

pytestmark = pytest.mark.slow


def _wait_for_all_runs(tb, expected_runs, timeout_s=60):
    deadline = time.monotonic() + timeout_s
    while True:
        info = tb.get_json(STOCK + "/info")
        if set(info) >= expected_runs or time.monotonic() > deadline:
            return info
        time.sleep(0.5)


def _demo_runs():
    return {p.parent.relative_to(DEMO_LOGS).as_posix() for p in DEMO_LOGS.rglob("*tfevents*")}


@pytest.mark.parametrize("load_fast", [False, True], ids=["python_multiplexer", "rust_data_server"])
def test_demo_logs_served_like_stock(load_fast):
    runs = _demo_runs()
    assert len(runs) >= 5, runs
    with TensorBoardProcess(DEMO_LOGS, load_fast=load_fast) as tb:
        listing = tb.get_json("/data/plugins_listing")
        assert listing["graph_explorer"]["enabled"]
        assert listing["graph_explorer"]["tab_name"] == "Graph Explorer"
        assert listing["graphs"]["enabled"], "the built-in Graphs tab still works beside ours"

        info = _wait_for_all_runs(tb, runs)
        assert set(info) == runs
        assert tb.get_json(OURS + "/info") == info

        compared = 0
        for run, run_info in info.items():
            queries = [{"run": run}] if run_info["run_graph"] else []
            for tag, tag_info in run_info["tags"].items():
                if tag_info["op_graph"]:
                    queries.append({"run": run, "tag": tag})
                if tag_info["conceptual_graph"]:
                    queries.append({"run": run, "tag": tag, "conceptual": "true"})
            for query in queries:
                qs = "?" + urllib.parse.urlencode(query)
                graphs = []
                for prefix in (OURS, STOCK):
                    status, content_type, body = tb.get(prefix + "/graph" + qs)
                    assert status == 200, (prefix, query, body[:300])
                    assert content_type.startswith("text/x-protobuf")
                    graphs.append(text_format.Parse(body.decode(), graph_pb2.GraphDef()))
                assert graphs[0] == graphs[1], query
                compared += 1
        assert compared >= 5

        status, content_type, body = tb.get(OURS + "/graph?run=no_such_run")
        assert status == 404 and b"unknown run 'no_such_run'" in body
        status, content_type, body = tb.get(OURS + "/index.js")
        assert status == 200 and content_type.startswith("application/javascript")
        status, _, _ = tb.get(OURS + "/static/../plugin.py")
        assert status == 404
