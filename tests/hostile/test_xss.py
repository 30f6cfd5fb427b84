"""XSS payloads are data, never markup, on the HTTP side.

Two real runs: ``xss`` (TF1 graph whose string ``Const`` values, ``_xss`` attrs and names carry
payloads - what TF's Python API allows) and ``xss_names`` (a GraphDef whose node names, op
names, devices and attr strings are the payloads, written by the real ``tf.summary.graph``).
Every answer of every route - success or error - must be ``application/json``,
``text/x-protobuf`` or ``text/plain`` with ``X-Content-Type-Options: nosniff`` (so no browser
renders it as HTML), and JSON answers must carry the payloads unchanged, as strings.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from tests.hostile.hostile_logs import XSS_PAYLOADS, xss_graph_def
from tests.tb_app import OURS

SAFE_TYPES = ("application/json", "text/x-protobuf", "text/plain")


@pytest.fixture(scope="module")
def app(app_factory, hostile_logs_root, tmp_path_factory):
    root = tmp_path_factory.mktemp("xss_logdir")
    for kind in ("xss", "xss_names"):
        shutil.copytree(hostile_logs_root / kind / kind, root / kind)
    return app_factory(root)


def _checked(response, status: int = 200):
    assert response.status_code == status, (response.status_code, response.get_data(as_text=True)[:300])
    content_type = response.headers["Content-Type"]
    assert content_type.startswith(SAFE_TYPES), content_type
    assert "html" not in content_type
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    return response


def _json(response, status: int = 200):
    _checked(response, status)
    assert response.headers["Content-Type"].startswith("application/json")
    return json.loads(response.get_data())


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_listing_and_info_are_json(app):
    listing = _json(app.get(OURS + "/graphs"))
    assert sorted(r["run"] for r in listing["runs"]) == ["xss", "xss_names"]
    _json(app.get(OURS + "/info"))


@pytest.mark.parametrize("run", ["xss", "xss_names"])
def test_graph_is_protobuf_text_with_the_payloads(app, run):
    response = _checked(app.get(OURS + "/graph", run=run))
    assert response.headers["Content-Type"].startswith("text/x-protobuf")
    text = response.get_data(as_text=True)
    for payload in XSS_PAYLOADS:
        assert payload.replace("\\", "\\\\").replace('"', '\\"').replace("'", "\\'") in text


@pytest.mark.parametrize("payload", XSS_PAYLOADS)
def test_node_with_payload_name_op_device_and_attrs_is_json_data(app, payload):
    node = _json(app.get(OURS + "/node", run="xss_names", name=f"scope{XSS_PAYLOADS.index(payload)}/{payload}",
                         wait="30"))
    assert node["op"] == payload and node["device"] == payload
    assert payload in json.dumps([a for a in node["attrs"] if a["key"] == "_xss"], ensure_ascii=False)


@pytest.mark.parametrize("index", range(len(XSS_PAYLOADS)))
def test_const_and_attr_payloads_written_by_tf_are_json_data(app, index):
    payload = XSS_PAYLOADS[index]
    const = _json(app.get(OURS + "/node", run="xss", name=f"payload{index}", wait="30"))
    assert any(payload in s for s in _strings(const)), const  # the Const's string value
    identity = _json(app.get(OURS + "/node", run="xss", name=f"a>b-{index}.svg", wait="30"))
    assert identity["name"] == f"a>b-{index}.svg"


def test_search_for_payloads_is_json(app):
    for payload in XSS_PAYLOADS:
        hits = _json(app.get(OURS + "/search", run="xss_names", q=re.escape(payload), wait="30"))
        assert payload in {h["name"] for h in hits["hits"]} | {h["op"] for h in hits["hits"]}
        by_op = _json(app.get(OURS + "/search", run="xss_names", op=payload, wait="30"))
        assert {h["op"] for h in by_op["hits"]} == {payload}


@pytest.mark.parametrize("payload", XSS_PAYLOADS)
def test_errors_that_echo_a_payload_are_not_html(app, payload):
    error = _json(app.get(OURS + "/node", run="xss_names", name=payload + "x", wait="30"), 404)
    assert payload + "x" in error["error"]
    _checked(app.get(OURS + "/graph", run=payload), 404)  # stock-compatible: text/plain
    _checked(app.get(OURS + "/run_metadata", run=payload, tag=payload), 404)
    _json(app.get(OURS + "/search", run=payload, q="x"), 404)
    _json(app.get(OURS + "/job", id=payload), 404)
    _json(app.get(OURS + "/search", run="xss_names", q=payload + "(", wait="30"), 400)
    _checked(app.get(OURS + "/static/" + payload), 404)


def test_scene_of_payload_graph_is_json(app):
    """Fails while ``api/tasks.py`` passes a ``dict`` as ``cache`` to ``layout.scene.build_scene``
    (which reads ``cache.misses``): every ``/scene`` answered 500 when this was written."""
    scene = _json(app.get(OURS + "/scene", run="xss_names", wait="60"))
    names = {n["name"] for n in scene["nodes"]}
    # the top level: payload ops (those without "/") and the scopes, names unchanged
    assert {p for p in XSS_PAYLOADS if "/" not in p} | {f"scope{i}" for i in range(len(XSS_PAYLOADS))} <= names


def test_upload_of_payload_graph_answers_json(app):
    from google.protobuf import text_format

    answer = _json(app.post(OURS + "/upload", text_format.MessageToString(xss_graph_def()).encode()))
    assert answer["ops"] == 2 * len(XSS_PAYLOADS)
    tag = answer["graph"]["tag"]
    node = _json(app.get(OURS + "/node", run="__upload__", tag=tag, name=XSS_PAYLOADS[0], wait="30"))
    assert node["op"] == XSS_PAYLOADS[0]
