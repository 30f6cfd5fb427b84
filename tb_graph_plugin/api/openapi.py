"""The OpenAPI 3.1 description of every route, served at ``/openapi.json``.

Declared here once, route by route (``ROUTES``): each route's parameters and the answers it may
give, with the JSON Schema of each JSON answer made from its ``wire`` dataclass
(``wire_schemas``), so that the description cannot drift from the payload the routes send.
``tb_graph_plugin/http_api.md`` documents the same routes in prose: ``tests/api/test_openapi.py``
fails when a route or a parameter is in one and not the other, and ``tests/api/test_fuzz_routes.py``
drives every route and parameter with ``schemathesis`` against this description (no 5xx, every
answer conforming).

Post-condition: ``spec()`` is a valid OpenAPI 3.1 document; every path of ``routes.Routes``'s
table is one of its paths (``/static/*`` as ``/static/{file}``).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import typing
from typing import Any, Optional

from tb_graph_plugin import metadata, wire

__all__ = ["ROUTES", "Param", "Route", "spec", "wire_schemas"]

# -- parameters --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Param:
    """A query (or path) parameter: its name, JSON Schema, whether it must be given, and what it
    means. ``json``: the value is a JSON document of ``schema`` (``expanded=["a","b"]``)."""

    name: str
    schema: dict
    description: str
    required: bool = False
    json: bool = False
    where: str = "query"

    def openapi(self) -> dict:
        out: dict[str, Any] = {"name": self.name, "in": self.where, "required": self.required,
                               "description": self.description}
        if self.json:
            out["content"] = {"application/json": {"schema": self.schema}}
        else:
            out["schema"] = self.schema
        return out


_STRING = {"type": "string"}
_NAMES = {"type": "array", "items": {"type": "string"}}


def _graph_ref(prefix: str = "", what: str = "the graph") -> list[Param]:
    return [
        Param(prefix + "run", _STRING, f"run of {what}; `{metadata.UPLOAD_RUN}` for uploads", required=True),
        Param(prefix + "tag", _STRING, f"tag of {what}; default `{metadata.RUN_GRAPH_TAG}` (the run graph)"),
        Param(prefix + "kind", {"type": "string", "enum": [k.value for k in wire.GraphKind]},
              f"kind of {what}; default `op`"),
        Param(prefix + "step", {"type": "integer"}, f"step of {what}; default the latest"),
    ]


_WAIT = Param("wait", {"type": "number", "minimum": 0},
              "seconds to wait for the job before answering 202 with its state (default 0.5, at most 10)")
_JOB = [
    Param("infer_scopes", {"type": "string", "enum": ["auto", "on", "off"]},
          "recover missing levels from names and dataflow; default `auto`"),
    Param("ungroup", _NAMES, "SeriesNode names not to form", json=True),
    Param("group", {"type": "string", "enum": ["scopes", "kernels"]},
          "`kernels`: each group's ops one fused kernel computes (attr `_kernel`) in a group of their own; default `scopes`"),
    _WAIT,
]
_ON_OFF = {"type": "string", "enum": ["on", "off"]}
_SCENE = [
    Param("expanded", _NAMES, "the open groups; absent: the server's first view", json=True),
    Param("extract", _ON_OFF, "auxiliary high-degree nodes to side columns; default `on`"),
    Param("float", _ON_OFF, "parameter-like ops drawn beside each consumer; default `on`"),
]

# -- answers -----------------------------------------------------------------------------

JSON = "application/json"
TEXT = "text/plain"
PBTXT = "text/x-protobuf"


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict, description: str) -> dict:
    return {"description": description, "content": {JSON: {"schema": schema}}}


_ERROR = _ref("ErrorAnswer")
_JSON_ERRORS = {
    "400": _json(_ERROR, "a bad parameter (the message says which and why)"),
    "404": _json(_ERROR, "unknown run, tag, step, upload, job or node"),
    "413": _json(_ERROR, "a graph over this server's op limit, or nested in too many name scopes"),
}
# Every route, stock-compatible ones too: an unexpected exception (``failures.guarded``), or a job
# whose worker died twice or ran out of time. The fuzzer asserts none happens.
_500 = {"500": {**_json(_ERROR, "a server error, naming its request id (also in the log)"),
                "headers": {"X-Request-Id": {"schema": _STRING, "description": "the request id"}}}}
_TEXT_ERRORS = {
    "400": {"description": "a bad parameter", "content": {TEXT: {"schema": _STRING}}},
    "404": {"description": "unknown run, tag or file", "content": {TEXT: {"schema": _STRING}}},
}
_JOB_202 = {"202": _json(_ref("Job"), "the job still runs: its state; poll `/job`, then ask again")}


def _graph_answers(schema_name: str, what: str) -> dict:
    return {"200": _json(_ref(schema_name), what), **_JOB_202, **_JSON_ERRORS, **_500}


_INFO_SCHEMA = {
    "type": "object",
    "additionalProperties": {
        "type": "object",
        "required": ["run", "tags", "run_graph"],
        "additionalProperties": False,
        "properties": {
            "run": _STRING,
            "run_graph": {"type": "boolean"},
            "tags": {"type": "object", "additionalProperties": {
                "type": "object",
                "required": ["tag", "conceptual_graph", "op_graph", "profile"],
                "additionalProperties": False,
                "properties": {"tag": _STRING, "conceptual_graph": {"type": "boolean"},
                               "op_graph": {"type": "boolean"}, "profile": {"type": "boolean"}},
            }},
        },
    },
}

# -- the routes ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Route:
    """One operation: ``method`` ``path`` (relative to the plugin's base), what it does, its
    parameters, its request body (a media type) and its answers by status."""

    path: str
    summary: str
    params: tuple[Param, ...]
    answers: dict
    method: str = "get"
    body: Optional[str] = None


ROUTES: tuple[Route, ...] = (
    # The stock Graphs plugin's API.
    Route("/info", "Runs and what graph data each holds (stock format)", (),
          {"200": _json(_INFO_SCHEMA, "run -> {run, run_graph, tags}"), **_500}),
    Route("/graph", "A GraphDef as pbtxt (stock)", (
        Param("run", _STRING, "run", required=True),
        Param("tag", _STRING, "tag; absent: the run graph"),
        Param("conceptual", {"type": "string", "enum": ["true", "false"]}, "`true`: the Keras model of `tag`"),
        Param("limit_attr_size", {"type": "integer", "exclusiveMinimum": 0},
              "remove attrs larger than this many bytes"),
        Param("large_attrs_key", _STRING, "the attr listing the removed attrs (with `limit_attr_size`)"),
    ), {"200": {"description": "the GraphDef", "content": {PBTXT: {"schema": _STRING}}}, **_TEXT_ERRORS, **_500}),
    Route("/run_metadata", "The RunMetadata of a profile tag as pbtxt (stock)", (
        Param("run", _STRING, "run", required=True),
        Param("tag", _STRING, "tag", required=True),
    ), {"200": {"description": "the RunMetadata", "content": {PBTXT: {"schema": _STRING}}},
        **_TEXT_ERRORS, **_500}),
    # Ours.
    Route("/graphs", "Every run and tag with graph data, their steps, the graph to open first", (),
          {"200": _json(_ref("Listing"), "the listing"), **_500}),
    Route("/upload", "Keep an uploaded GraphDef (.pbtxt, .pb) or event file", (
        Param("filename", _STRING, "the file's name (an event file is also recognised by its content)"),
    ), {"200": _json(_ref("UploadAnswer"), "the uploaded graph"),
        **{k: v for k, v in _JSON_ERRORS.items() if k != "404"}, **_500}, method="post",
        body="application/octet-stream"),
    Route("/scene", "The laid-out graph for an expansion state",
          (*_graph_ref(), *_SCENE, *_JOB), _graph_answers("Scene", "the scene")),
    Route("/scene_delta", "What changed between two expansion states",
          (*_graph_ref(), Param("from", _NAMES, "the client's open groups", json=True), *_SCENE, *_JOB),
          _graph_answers("SceneDelta", "the change")),
    Route("/job", "A job's state; with `wait`, a long poll", (
        Param("id", _STRING, "the job id of a 202 answer", required=True), _WAIT,
    ), {"200": _json(_ref("Job"), "the job's state"),
        **{k: v for k, v in _JSON_ERRORS.items() if k != "413"}, **_500}),
    Route("/node", "Details of one node for the info pane",
          (*_graph_ref(), Param("name", _STRING, "the node's name", required=True),
           Param("cost", _ON_OFF, "`on`: add `cost` (parameters, FLOPs, output bytes); default `off`"), *_JOB),
          _graph_answers("NodeDetails", "the node")),
    Route("/search", "Nodes whose name, label or op type matches a regex (RE2) and whose op type contains `op`; "
                     "or the matches of a pattern of ops", (
        *_graph_ref(), Param("q", {"type": "string", "maxLength": 1000}, "RE2 regex on names, labels and op types"),
        Param("op", _STRING, "op type, contained, ignoring case"),
        Param("names_only", _ON_OFF, "`on`: match `q` against names alone; default `off`"),
        Param("pattern", {"type": "string", "maxLength": 1000},
              "a chain of steps `A -> * -> B` (RE2 over op type; `op:`, `label:`, `name:`; `*`/`*N` gaps), "
              "instead of `q`/`op`"), *_JOB,
    ), _graph_answers("SearchAnswer", "the hits")),
    Route("/diff", "The structural diff of the graph against a base graph",
          (*_graph_ref(), *_graph_ref("base_", "the base graph"), *_JOB), _graph_answers("GraphDiff", "the diff")),
    Route("/node_data_tags", "Every node-data tag (summaries of `graph_explorer_node_data`, and uploads)", (),
          {"200": _json(_ref("NodeDataListing"), "the tags"), **_500}),
    Route("/node_data", "One node-data tag's values at a step for the nodes an expansion state shows", (
        *_graph_ref(),
        Param("data_run", _STRING, "run of the node data; default the graph's run; `__upload__` for uploads; "
              "`__cost__` for the built-in cost colour modes"),
        Param("data_tag", _STRING, "tag of the node data (for uploads the upload id)", required=True),
        Param("data_step", {"type": "integer"}, "step of the node data; default the latest"),
        Param("agg", {"type": "string", "enum": ["max", "mean", "sum"]},
              "a group's value from the values inside it; default `max`"),
        Param("expanded", _NAMES, "the open groups: the values of their children (and the top level's) are sent",
              json=True),
        Param("node", _STRING, "a node whose value at every step comes as `history`"),
        Param("top_k", {"type": "integer", "minimum": 0, "maximum": 100}, "how many top nodes; default 10"),
        *_JOB,
    ), _graph_answers("NodeDataAnswer", "the values")),
    Route("/upload_node_data", "Keep an uploaded node-data JSON file (Model Explorer's format)", (
        Param("filename", _STRING, "the file's name"),
    ), {"200": _json(_ref("NodeDataListing"), "the node-data tags it adds (one per graph in the file)"),
        **{k: v for k, v in _JSON_ERRORS.items() if k not in ("404", "413")}, **_500}, method="post",
        body="application/octet-stream"),
    Route("/openapi.json", "This description", (),
          {"200": {"description": "OpenAPI 3.1", "content": {JSON: {"schema": {"type": "object"}}}}, **_500}),
    # The frontend.
    Route("/index.js", "The frontend's ES module (starts the build of the first graph)", (),
          {"200": {"description": "the module", "content": {"application/javascript": {"schema": _STRING}}},
           **_500}),
    Route("/static/{file}", "A file of the bundled frontend", (
        Param("file", _STRING, "a file in the static folder", required=True, where="path"),
    ), {"200": {"description": "the file (MIME type from a fixed table)", "content": {"*/*": {}}},
        "404": _TEXT_ERRORS["404"], **_500}),
)

# -- wire dataclasses -> JSON Schema ----------------------------------------------------


def _schema_of(tp, named: dict) -> dict:
    """The JSON Schema of annotation ``tp``; wire dataclasses and enums go to ``named``."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if tp is Any:
        return {}
    if tp in (str, int, float, bool):
        return {"type": {str: "string", int: "integer", float: "number", bool: "boolean"}[tp]}
    if origin is typing.Union:
        inner = [a for a in args if a is not type(None)]
        (only,) = inner
        return {"anyOf": [_schema_of(only, named), {"type": "null"}]}
    if origin is typing.Literal:
        return {"type": "string", "enum": list(args)}
    if origin is list:
        return {"type": "array", "items": _schema_of(args[0], named)}
    if origin is dict:
        return {"type": "object", "additionalProperties": _schema_of(args[1], named)}
    if isinstance(tp, type) and issubclass(tp, enum.Enum) and issubclass(tp, str):
        named.setdefault(tp.__name__, {"type": "string", "enum": [m.value for m in tp]})
        return _ref(tp.__name__)
    if dataclasses.is_dataclass(tp):
        if tp.__name__ not in named:
            named[tp.__name__] = {}  # placeholder: recursion stops here
            hints = typing.get_type_hints(tp)
            fields = dataclasses.fields(tp)
            named[tp.__name__] = {
                "type": "object",
                "properties": {f.name: _schema_of(hints[f.name], named) for f in fields},
                # always written, but for OMIT_NONE fields
                "required": [f.name for f in fields if not f.metadata.get("omit_none")],
                "additionalProperties": False,
            }
        return _ref(tp.__name__)
    raise TypeError(f"no JSON Schema for {tp!r}")


def wire_schemas() -> dict:
    """``components.schemas``: every dataclass and string enum of ``wire``, by name."""
    named: dict = {}
    for name in wire.__all__:
        value = getattr(wire, name)
        if dataclasses.is_dataclass(value) or (isinstance(value, type) and issubclass(value, enum.Enum)
                                               and issubclass(value, str)):
            _schema_of(value, named)
    return dict(sorted(named.items()))


@functools.cache
def spec() -> dict:
    """The OpenAPI document (built once; callers must not mutate it)."""
    paths: dict = {}
    for route in ROUTES:
        operation: dict[str, Any] = {
            "summary": route.summary,
            "operationId": route.method + route.path.replace("/", "_").replace(".", "_").replace("{", "").replace("}", ""),
            "parameters": [p.openapi() for p in route.params],
            "responses": route.answers,
        }
        if route.body:
            operation["requestBody"] = {"content": {route.body: {"schema": {"type": "string", "format": "binary"}}}}
        paths.setdefault(route.path, {})[route.method] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "Graph Explorer (TensorBoard plugin)", "version": str(wire.WIRE_VERSION),
                 "description": "Documented in prose in tb_graph_plugin/http_api.md."},
        "servers": [{"url": f"/data/plugin/{metadata.PLUGIN_NAME}"}],
        "paths": paths,
        "components": {"schemas": wire_schemas()},
    }
