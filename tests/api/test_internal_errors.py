"""An unexpected exception in any route answers a JSON 500 naming a request id, and the log holds
the traceback under that id (``api/failures.py``; issue 23, item 8). Before, it reached
werkzeug: an HTML 500 page, or (here, under the test client) the exception itself.

Each test breaks one ``*_impl`` on purpose with ``monkeypatch``, on a real ``TensorBoardWSGI``
app over the committed ``demo_logs``.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import pytest

from tb_graph_plugin.api import compat, jobs, uploads
from tb_graph_plugin.api.failures import REQUEST_ID_HEADER
from tb_graph_plugin.ingest import listing
from tests.tb_app import OURS, TbApp

DEMO_LOGS = Path(__file__).resolve().parents[2] / "demo_logs"


@pytest.fixture(scope="module")
def app():
    app = TbApp(DEMO_LOGS, workers=1)
    yield app
    app.ours.pool.close()


class Boom(RuntimeError):
    pass


def _boom(*args, **kwargs):
    raise Boom("a bug in an impl")


def _answer_500(response, caplog) -> dict:
    assert response.status_code == 500, response.get_data(as_text=True)[:300]
    assert response.headers["Content-Type"].startswith("application/json")
    body = json.loads(response.get_data())
    assert set(body) == {"error", "request_id", "version"}
    request_id = body["request_id"]
    assert re.fullmatch(r"[0-9a-f]{16}", request_id)
    assert response.headers[REQUEST_ID_HEADER] == request_id
    assert f"request id {request_id}" in body["error"]
    logged = [r for r in caplog.records if request_id in r.getMessage()]
    assert len(logged) == 1 and logged[0].levelno == logging.ERROR
    return body | {"record": logged[0]}


@pytest.mark.parametrize("route, module, name, method", [
    ("/graphs", listing, "listing", "get"),  # one of ours
    ("/info", compat, "info_impl", "get"),  # stock-compatible: its 500 is JSON too
    ("/upload", uploads, "upload_impl", "post"),
])
def test_unexpected_exception_is_a_json_500_with_a_logged_request_id(app, monkeypatch, caplog, route, module,
                                                                     name, method):
    monkeypatch.setattr(module, name, _boom)
    response = app.get(OURS + route) if method == "get" else app.post(OURS + route, b"node { name: 'a' }")
    answer = _answer_500(response, caplog)
    assert answer["error"] == (
        f"internal error (Boom) answering {OURS}{route}; request id {answer['request_id']} "
        "(the TensorBoard log has the details under it)"
    )
    record = answer["record"]
    assert record.exc_info[0] is Boom  # the traceback is logged
    assert f"{method.upper()} {OURS}{route}" in record.getMessage()


def test_request_ids_differ(app, monkeypatch, caplog):
    monkeypatch.setattr(listing, "listing", _boom)
    ids = {json.loads(app.get(OURS + "/graphs").get_data())["request_id"] for _ in range(3)}
    assert len(ids) == 3


def test_a_job_failure_500_names_a_request_id_too(app, monkeypatch, caplog):
    """A ``PublicError`` answered 500 (a job whose worker died twice) also names an id."""

    def dead(*args, **kwargs):
        raise jobs.JobFailed(500, "scene failed: the worker process died in stage 'layout'")

    monkeypatch.setattr(listing, "listing", dead)
    answer = _answer_500(app.get(OURS + "/graphs"), caplog)
    assert answer["error"] == (f"scene failed: the worker process died in stage 'layout' "
                               f"(request id {answer['request_id']})")
    assert answer["record"].exc_info is None


def test_4xx_answers_name_no_request_id(app):
    response = app.get(OURS + "/scene", run="tf1_graph", expanded="[1]")
    assert response.status_code == 400
    assert set(json.loads(response.get_data())) == {"error", "version"}
    assert REQUEST_ID_HEADER not in response.headers
