"""The OpenAPI description (``/openapi.json``, ``api/openapi.py``) and ``http_api.md`` describe the
same routes with the same parameters, and the description is valid OpenAPI 3.1.

``http_api.md`` names each route in a ``###`` heading (``GET /scene?...``; several routes may
share one) followed by a ``Parameters:`` line listing its query parameters in backticks, each
marked ``(required)`` when it must be given; a route's path parameters (``/static/<file>``) are in
its path. ``differences`` compares the two; ``test_the_check_catches_*`` feed it deliberately wrong
documents, so it is known to fail when they disagree.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from openapi_spec_validator import validate

from tb_graph_plugin.api import openapi
from tests.tb_app import OURS, TbApp

HTTP_API_MD = Path(openapi.__file__).resolve().parents[1] / "http_api.md"
DEMO_LOGS = Path(__file__).resolve().parents[2] / "demo_logs"

_ROUTE = re.compile(r"`(GET|POST|PUT|DELETE) (/[^?`\[]*)")
_PARAM = re.compile(r"`(\w+)`( \(required\))?")

Routes = dict[tuple[str, str], dict[str, bool]]  # (method, path) -> parameter -> required


def doc_routes(markdown: str) -> Routes:
    """The routes of ``http_api.md`` with the parameters of their ``Parameters:`` lines."""
    routes: Routes = {}
    lines = markdown.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("### "):
            continue
        found = _ROUTE.findall(line)
        assert found, f"heading names no route: {line!r}"
        following = lines[i + 1] if i + 1 < len(lines) else ""
        assert following.startswith("Parameters: "), f"no `Parameters:` line after {line!r}"
        query = {name: bool(required) for name, required in _PARAM.findall(following)}
        for method, path in found:
            path_params = {name: True for name in re.findall(r"<(\w+)>", path)}
            routes[(method, re.sub(r"<(\w+)>", r"{\1}", path))] = {**query, **path_params}
    return routes


def spec_routes(spec: dict) -> Routes:
    return {(method.upper(), path): {p["name"]: p["required"] for p in operation["parameters"]}
            for path, methods in spec["paths"].items() for method, operation in methods.items()}


def differences(doc: Routes, spec: Routes) -> list[str]:
    out = [f"{m} {p}: in http_api.md, not in the OpenAPI description" for m, p in sorted(doc.keys() - spec.keys())]
    out += [f"{m} {p}: in the OpenAPI description, not in http_api.md" for m, p in sorted(spec.keys() - doc.keys())]
    for key in sorted(doc.keys() & spec.keys()):
        a, b = doc[key], spec[key]
        for name in sorted(a.keys() | b.keys()):
            if name not in b:
                out.append(f"{key[0]} {key[1]}: `{name}` only in http_api.md")
            elif name not in a:
                out.append(f"{key[0]} {key[1]}: `{name}` only in the OpenAPI description")
            elif a[name] != b[name]:
                out.append(f"{key[0]} {key[1]}: `{name}` is required in "
                           f"{'http_api.md' if a[name] else 'the OpenAPI description'} only")
    return out


def test_http_api_md_and_the_openapi_description_agree():
    doc, spec = doc_routes(HTTP_API_MD.read_text()), spec_routes(openapi.spec())
    assert differences(doc, spec) == []
    assert len(spec) == 17


def test_every_route_of_the_table_is_described():
    from tb_graph_plugin.api.routes import Routes

    table = {path.replace("/*", "/{file}") for path in Routes(None, None, None).table()}
    assert table == set(openapi.spec()["paths"])


def test_the_description_is_valid_openapi_3_1():
    validate(openapi.spec())


def test_every_wire_answer_has_a_schema():
    schemas = openapi.spec()["components"]["schemas"]
    for name in ("Listing", "Scene", "SceneDelta", "Job", "NodeDetails", "SearchAnswer", "UploadAnswer",
                 "GraphDiff", "ErrorAnswer"):
        assert schemas[name]["additionalProperties"] is False
    assert schemas["ErrorAnswer"]["required"] == ["error", "version"]  # request_id: only on a 5xx
    assert schemas["GraphKind"] == {"type": "string", "enum": ["op", "conceptual", "profile"]}


def test_the_plugin_serves_the_description():
    app = TbApp(DEMO_LOGS, workers=1)
    try:
        response = app.get(OURS + "/openapi.json")
        assert response.status_code == 200
        assert response.headers["Content-Type"].startswith("application/json")
        assert json.loads(response.get_data()) == openapi.spec()
    finally:
        app.ours.pool.close()


# -- the check itself ------------------------------------------------------------------------


def _doc_with(old: str, new: str) -> Routes:
    text = HTTP_API_MD.read_text()
    assert old in text
    return doc_routes(text.replace(old, new, 1))


def test_the_check_catches_a_missing_parameter():
    doc = _doc_with("Parameters: `id` (required), `wait`.", "Parameters: `id` (required).")
    assert differences(doc, spec_routes(openapi.spec())) == ["GET /job: `wait` only in the OpenAPI description"]


def test_the_check_catches_a_parameter_not_required_in_one():
    doc = _doc_with("Parameters: `id` (required), `wait`.", "Parameters: `id`, `wait`.")
    assert differences(doc, spec_routes(openapi.spec())) == [
        "GET /job: `id` is required in the OpenAPI description only"]


def test_the_check_catches_an_undescribed_route():
    doc = _doc_with("### `GET /graphs`", "### `GET /graphs`, `GET /graphs2`")
    assert differences(doc, spec_routes(openapi.spec())) == [
        "GET /graphs2: in http_api.md, not in the OpenAPI description"]


def test_the_check_catches_an_undocumented_route():
    spec = spec_routes(openapi.spec())
    spec[("GET", "/secret")] = {}
    assert differences(doc_routes(HTTP_API_MD.read_text()), spec) == [
        "GET /secret: in the OpenAPI description, not in http_api.md"]


def test_a_heading_without_its_parameters_line_fails():
    with pytest.raises(AssertionError, match="no `Parameters:` line"):
        _doc_with("### `GET /graphs`\nParameters: none.", "### `GET /graphs`")
