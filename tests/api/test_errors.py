"""Errors of the routes: status codes and messages that say the real cause (never the stock
tab's "Malformed GraphDef")."""

from __future__ import annotations

import json

import pytest

from tensorboard import context as tb_context

from tests.tb_app import OURS, TbApp

CTX = tb_context.RequestContext()


@pytest.fixture(scope="module")
def app(real_logs):
    return TbApp(real_logs.get("tf1_graph"))


def _text(response):
    return response.get_data(as_text=True)


def test_unknown_run_is_404_with_message(app):
    response = app.get(OURS + "/graph", run="no_such_run")
    assert response.status_code == 404
    assert "unknown run 'no_such_run'" in _text(response)


def test_unknown_tag_is_404_with_message(app):
    response = app.get(OURS + "/graph", run="tf1_graph", tag="no_such_tag")
    assert response.status_code == 404
    assert "run 'tf1_graph' has no tag 'no_such_tag'" in _text(response)


def test_unknown_profile_tag_is_404(app):
    response = app.get(OURS + "/run_metadata", run="tf1_graph", tag="nope")
    assert response.status_code == 404
    assert "no tag 'nope'" in _text(response)


@pytest.mark.parametrize(
    "params, message",
    [
        ({"limit_attr_size": "abc", "large_attrs_key": "k"}, "`limit_attr_size` must be an integer, got 'abc'"),
        ({"limit_attr_size": "-5", "large_attrs_key": "k"}, "`limit_attr_size` must be > 0, got -5"),
        ({"limit_attr_size": "0", "large_attrs_key": "k"}, "`limit_attr_size` must be > 0, got 0"),
        ({"limit_attr_size": "10"}, "`large_attrs_key` is required when `limit_attr_size` is given"),
    ],
)
def test_bad_limit_attr_size_is_400(app, params, message):
    response = app.get(OURS + "/graph", run="tf1_graph", **params)
    assert response.status_code == 400
    assert message in _text(response)


def test_missing_run_is_400(app):
    response = app.get(OURS + "/graph")
    assert response.status_code == 400
    assert 'query parameter "run" is required' in _text(response)
    response = app.get(OURS + "/run_metadata", run="tf1_graph")
    assert response.status_code == 400
    assert 'query parameter "tag" is required' in _text(response)


def test_unknown_step_names_the_kept_steps(app):
    response = app.get(OURS + "/graphs")
    steps = [t["steps"] for r in json.loads(response.get_data())["runs"] for t in r["tags"] if t["tag"] == "__run_graph__"][0]
    assert len(steps) == 2  # the run graph written at two steps
    # The stock plugin serves only the latest; ours serves each step.
    store = app.ours._store
    from tb_graph_plugin import wire

    ref = lambda step: wire.GraphRef("tf1_graph", "__run_graph__", wire.GraphKind.OP, step)  # noqa: E731
    first = store.graph_def(CTX, "", ref(steps[0]["step"]))
    last = store.graph_def(CTX, "", ref(steps[1]["step"]))
    assert first != last
    assert store.graph_def(CTX, "", ref(None)) == last
    from tensorboard import errors

    with pytest.raises(errors.NotFoundError, match=r"has no step 12345 \(steps kept: "):
        store.graph_def(CTX, "", ref(12345))


@pytest.mark.parametrize(
    "path",
    [
        "/static/../plugin.py",
        "/static/%2e%2e/plugin.py",
        "/static/..%2fplugin.py",
        "/static//etc/passwd",
        "/static/../../../../etc/passwd",
        "/static/nonexistent.js",
        "/static/",
    ],
)
def test_static_traversal_is_404(app, path):
    response = app.get(OURS + path)
    assert response.status_code == 404, path
    assert b"import" not in response.get_data()


def test_bundle_served_as_javascript(app):
    response = app.get(OURS + "/index.js")
    assert response.status_code == 200
    assert response.mimetype == "application/javascript"
    assert b"render" in response.get_data()
