"""The route table: each route validates its parameters, calls an ``*_impl``, and responds.

Every route is documented in ``tb_graph_plugin/http_api.md``. Stock-compatible routes answer
errors as TensorBoard does (text/plain, via ``tensorboard.errors``); our JSON routes answer
``{"error": "<message>"}`` with the same status code (``failures.json_errors``). Any other
exception answers a JSON 500 naming a request id, on every route (``failures.guarded``).
"""

from __future__ import annotations

import functools
import json
import time
from typing import Callable, Optional

from tensorboard import errors, plugin_util
from tensorboard.backend import http_util
from werkzeug import wrappers

from tb_graph_plugin import metadata, wire
from tb_graph_plugin.api import compat, node_data, openapi, params, static_files, uploads
from tb_graph_plugin.api.failures import JSON_MIME, guarded, json_errors
from tb_graph_plugin.api.workers import JobHandle, WorkerPool
from tb_graph_plugin.ingest import listing
from tb_graph_plugin.ingest.store import GraphStore

__all__ = ["Routes", "scene_args"]

# How long a request waits for its job before answering 202 with the job's state.
DEFAULT_WAIT_S = 0.5
MAX_WAIT_S = 10.0

_INFER_SCOPES = {"auto": None, "on": True, "off": False}
_GROUP = {"scopes": False, "kernels": True}  # `group`: HierarchyOptions.group_kernels


class Routes:
    def __init__(self, store: GraphStore, data_provider, pool: WorkerPool):
        self._store = store
        self._provider = data_provider
        self._pool = pool
        self._node_data = node_data.NodeDataReader(data_provider)
        self.on_tab_opened: Optional[Callable[[str], None]] = None  # called with the experiment id

    def table(self):
        """Route -> WSGI app, each ``guarded``: no exception reaches werkzeug's HTML 500 page."""
        return {route: guarded(app) for route, app in self._apps().items()}

    def _apps(self):
        return {
            # The stock Graphs plugin's API.
            "/info": self.info_route,
            "/graph": self.graph_route,
            "/run_metadata": self.run_metadata_route,
            # Ours.
            "/graphs": self.graphs_route,
            "/upload": self.upload_route,
            "/scene": self.scene_route,
            "/scene_delta": self.scene_delta_route,
            "/job": self.job_route,
            "/node": self.node_route,
            "/search": self.search_route,
            "/diff": self.diff_route,
            "/node_data_tags": self.node_data_tags_route,
            "/node_data": self.node_data_route,
            "/upload_node_data": self.upload_node_data_route,
            "/openapi.json": self.openapi_route,
            # The frontend.
            "/index.js": self.index_js_route,
            "/static/*": self.static_route,
        }

    # -- stock API ------------------------------------------------------------------------

    @wrappers.Request.application
    def info_route(self, request):
        ctx, eid = _context(request)
        body, mime = compat.info_impl(self._store, self._provider, ctx, eid)
        return http_util.Respond(request, body, mime)

    @wrappers.Request.application
    def graph_route(self, request):
        ctx, eid = _context(request)
        run = params.required(request.args, "run")
        body, mime = compat.graph_impl(
            self._store,
            ctx,
            eid,
            run,
            request.args.get("tag"),
            request.args.get("conceptual") == "true",
            params.optional_int(request.args, "limit_attr_size"),
            request.args.get("large_attrs_key"),
        )
        return http_util.Respond(request, body, mime)

    @wrappers.Request.application
    def run_metadata_route(self, request):
        ctx, eid = _context(request)
        tag = params.required(request.args, "tag")
        run = params.required(request.args, "run")
        body, mime = compat.run_metadata_impl(self._store, ctx, eid, run, tag)
        return http_util.Respond(request, body, mime)

    # -- ours -----------------------------------------------------------------------------

    @wrappers.Request.application
    @json_errors
    def graphs_route(self, request):
        ctx, eid = _context(request)
        body = listing.listing(self._provider, ctx, eid)
        return http_util.Respond(request, wire.to_json(body), JSON_MIME)

    @wrappers.Request.application
    @json_errors
    def upload_route(self, request):
        if request.method != "POST":
            body = wire.to_json(wire.ErrorAnswer(error="upload takes POST with the file as body"))
            return http_util.Respond(request, body, JSON_MIME, code=405, headers=[("Allow", "POST")])
        blob = _upload_body(request, self._store.upload_limit_bytes)
        filename = request.args.get("filename") or "upload"
        body, mime = uploads.upload_impl(self._store, blob, filename)
        return http_util.Respond(request, body, mime)

    @wrappers.Request.application
    @json_errors
    def scene_route(self, request):
        ref = params.graph_ref(request.args)
        expanded = params.string_list(request.args, "expanded")
        extract, floating = _on_off(request.args, "extract"), _on_off(request.args, "float")
        first_view = "expanded" not in request.args  # no expansion state yet: the server picks
        return self._run(request, ref, "scene", scene_args(ref, expanded, extract, floating, first_view))

    @wrappers.Request.application
    @json_errors
    def scene_delta_route(self, request):
        ref = params.graph_ref(request.args)
        old = params.string_list(request.args, "from")
        expanded = params.string_list(request.args, "expanded")
        args = scene_args(ref, expanded, _on_off(request.args, "extract"), _on_off(request.args, "float"))
        args["from"] = sorted(set(old))
        return self._run(request, ref, "scene_delta", args)

    @wrappers.Request.application
    @json_errors
    def job_route(self, request):
        wait_s = params.optional_float(request.args, "wait")
        handle = self._pool.job(params.required(request.args, "id"))
        if wait_s:  # long poll: answer as soon as the job ends, or after wait_s with its progress
            handle.wait(min(wait_s, MAX_WAIT_S))
        return http_util.Respond(request, wire.to_json(handle.wire()), JSON_MIME)

    @wrappers.Request.application
    @json_errors
    def node_route(self, request):
        ref = params.graph_ref(request.args)
        args = {"name": params.required(request.args, "name")}
        if _on_off(request.args, "cost", default="off"):
            args["cost"] = True  # its own job: the first cost of a graph reads every op (hierarchy.cost)
        return self._run(request, ref, "node", args)

    @wrappers.Request.application
    @json_errors
    def search_route(self, request):
        ref = params.graph_ref(request.args)
        pattern = request.args.get("pattern") or None
        if pattern is not None:
            if request.args.get("q") or request.args.get("op"):
                raise errors.InvalidArgumentError("search takes `pattern` or `q`/`op`, not both")
            return self._run(request, ref, "search", {"pattern": pattern})
        args = {"q": request.args.get("q", ""), "op": request.args.get("op") or None,
                "names_only": _on_off(request.args, "names_only", default="off")}
        if not args["q"] and not args["op"]:
            raise errors.InvalidArgumentError("search needs `q` (a regex), `op` (an op type) or `pattern` (A -> * -> B)")
        return self._run(request, ref, "search", args)

    @wrappers.Request.application
    @json_errors
    def diff_route(self, request):
        ref = params.graph_ref(request.args)
        base = params.graph_ref(request.args, prefix="base_")
        args = {"graph": wire.to_plain(ref), "base": wire.to_plain(base)}
        return self._run(request, ref, "diff", args, base=base)

    @wrappers.Request.application
    @json_errors
    def node_data_tags_route(self, request):
        ctx, eid = _context(request)
        return http_util.Respond(request, wire.to_json(self._node_data.listing(ctx, eid)), JSON_MIME)

    @wrappers.Request.application
    @json_errors
    def node_data_route(self, request):
        ref = params.graph_ref(request.args)
        ctx, eid = _context(request)
        data_run = request.args.get("data_run") or ref.run
        if data_run == metadata.COST_RUN:
            return self._cost_data(request, ref, params.required(request.args, "data_tag"))
        series = self._node_data.series(ctx, eid, data_run, params.required(request.args, "data_tag"))
        step = params.optional_int(request.args, "data_step")
        step = series.steps[-1] if step is None and series.steps else step
        agg = request.args.get("agg") or "max"
        if agg not in ("max", "mean", "sum"):
            raise errors.InvalidArgumentError(f"query parameter `agg` must be max, mean or sum, got {agg!r}")
        top_k = params.optional_int(request.args, "top_k")
        top_k = 10 if top_k is None else top_k
        if not 0 <= top_k <= node_data.TOP_K_MAX:
            raise errors.InvalidArgumentError(f"query parameter `top_k` must be 0..{node_data.TOP_K_MAX}, got {top_k}")
        values = series.step(step)  # 404 for a step the tag does not have
        key_args = {"expanded": sorted(set(params.string_list(request.args, "expanded"))), "agg": agg,
                    "top_k": top_k, "node": request.args.get("node") or None,
                    "data": [series.run, series.tag, step, series.digest(step)]}
        args = dict(key_args, names=values.names, values=values.values)
        handle, wait_s = self._submit_request(request, ref, "node_data", args, key_args=key_args)
        if not handle.wait(wait_s):
            return http_util.Respond(request, wire.to_json(handle.wire()), JSON_MIME, code=202)
        body = node_data.finish(handle.value(), ref, series, step, agg)
        return http_util.Respond(request, body, JSON_MIME)

    def _cost_data(self, request, ref: wire.GraphRef, field: str):
        """``/node_data`` of a built-in cost colour mode: every op's ``field`` from the graph itself,
        summed into groups (``agg`` is always ``sum``: a group's value is its cost), one step (0)."""
        if field not in metadata.COST_TAGS:
            raise errors.NotFoundError(f"no cost {field!r} (cost colour modes: {', '.join(metadata.COST_TAGS)})")
        top_k = params.optional_int(request.args, "top_k")
        top_k = 10 if top_k is None else top_k
        if not 0 <= top_k <= node_data.TOP_K_MAX:
            raise errors.InvalidArgumentError(f"query parameter `top_k` must be 0..{node_data.TOP_K_MAX}, got {top_k}")
        args = {"expanded": sorted(set(params.string_list(request.args, "expanded"))), "agg": "sum", "top_k": top_k,
                "node": request.args.get("node") or None, "cost": field}
        handle, wait_s = self._submit_request(request, ref, "node_data", args)
        if not handle.wait(wait_s):
            return http_util.Respond(request, wire.to_json(handle.wire()), JSON_MIME, code=202)
        return http_util.Respond(request, node_data.finish_cost(handle.value(), ref, field), JSON_MIME)

    @wrappers.Request.application
    @json_errors
    def upload_node_data_route(self, request):
        if request.method != "POST":
            body = wire.to_json(wire.ErrorAnswer(error="upload_node_data takes POST with the file as body"))
            return http_util.Respond(request, body, JSON_MIME, code=405, headers=[("Allow", "POST")])
        blob = _upload_body(request, self._store.upload_limit_bytes)
        if len(blob) > self._store.upload_limit_bytes:
            raise errors.InvalidArgumentError(f"node data file larger than the upload limit ({self._store.upload_limit_bytes >> 20} MiB)")
        listing_ = self._node_data.upload(blob, request.args.get("filename") or "upload")
        return http_util.Respond(request, wire.to_json(listing_), JSON_MIME)

    def _run(self, request, ref: wire.GraphRef, task: str, args: dict, base: Optional[wire.GraphRef] = None):
        """Submit (or join) the job for this request; answer its result, or 202 with its state."""
        handle, wait_s = self._submit_request(request, ref, task, args, base)
        return self._answer(request, handle, wait_s)

    def _submit_request(self, request, ref: wire.GraphRef, task: str, args: dict,
                        base: Optional[wire.GraphRef] = None, key_args: Optional[dict] = None):
        """The job of this request (its common parameters parsed), and how long to wait for it."""
        ctx, eid = _context(request)
        infer = request.args.get("infer_scopes", "auto")
        if infer not in _INFER_SCOPES:
            raise errors.InvalidArgumentError(f"query parameter `infer_scopes` must be auto, on or off, got {infer!r}")
        ungroup = tuple(sorted(set(params.string_list(request.args, "ungroup"))))
        group = request.args.get("group", "scopes")
        if group not in _GROUP:
            raise errors.InvalidArgumentError(f"query parameter `group` must be scopes or kernels, got {group!r}")
        wait_s = params.optional_float(request.args, "wait")
        wait_s = DEFAULT_WAIT_S if wait_s is None else min(wait_s, MAX_WAIT_S)
        return self.submit(ctx, eid, ref, task, args, infer, ungroup, base, key_args, group), wait_s

    def submit(self, ctx, eid, ref: wire.GraphRef, task: str, args: dict, infer: str = "auto",
               ungroup: tuple = (), base: Optional[wire.GraphRef] = None,
               key_args: Optional[dict] = None, group: str = "scopes") -> JobHandle:
        """Submit (or join) a job: the one place that turns a request into pool keys.

        Used by the routes and by ``warmup``, so that a warm-up job and the frontend's first
        request for the same graph are the same job. ``ungroup``: sorted SeriesNode names not
        to form (``HierarchyOptions.ungrouped_series``), part of the graph key. ``base``: for a
        ``diff`` job, graph A; the job's graph is then the pair (B, A), built together.
        ``key_args``: what identifies the job when ``args`` carries bulk data (``/node_data``:
        the data's run, tag, step and digest instead of its values); default ``args``.
        ``group``: ``kernels`` groups each group's ops by their fused kernel
        (``HierarchyOptions.group_kernels``), part of the graph key.
        """
        hierarchy_options = {"infer_scopes": _INFER_SCOPES[infer], "ungrouped_series": list(ungroup),
                             "group_kernels": _GROUP[group]}
        graph_key = (eid, ref.run, ref.tag, ref.kind.value, ref.step, infer, ungroup, group)

        if base is not None:
            base_key = (eid, base.run, base.tag, base.kind.value, base.step, infer, ungroup, group)
            graph_key = ("diff", graph_key, base_key)

        def load():
            """The job's graph payload; for a diff, the pair's: B, with A under ``base``."""
            payload = self._graph_payload(ctx, eid, ref, hierarchy_options)
            if base is None:
                return payload
            return dict(payload, base=self._graph_payload(ctx, eid, base, hierarchy_options))

        job_key = (graph_key, task, wire.to_json(args if key_args is None else key_args))
        return self._pool.submit(job_key, task, args, graph_key, load)

    def _graph_payload(self, ctx, eid, ref: wire.GraphRef, hierarchy_options) -> dict:
        """What a worker needs to build the graph: serialized protos, read on a pool thread and
        not parsed here where the blob already holds them (the worker parses them once, and
        checks ``max_ops``: ``tasks.GraphState``)."""
        start = time.perf_counter()
        payload = {
            "graph": self._store.graph_bytes(ctx, eid, ref),
            "what": f"graph {ref.kind.value} of run {ref.run!r} tag {ref.tag!r}",
            "max_ops": self._store.max_ops,
            "hierarchy_options": hierarchy_options,
        }
        if ref.kind == wire.GraphKind.PROFILE and ref.run != metadata.UPLOAD_RUN:
            payload["run_metadata"] = self._store.run_metadata_bytes(ctx, eid, ref.run, ref.tag, ref.step)
        # Stage timings of the cold path (``scene.stats["timings"]``): the read here, then the
        # hand-off to the worker, measured by the wall clock both processes share.
        payload["read_s"] = time.perf_counter() - start
        payload["sent_at"] = time.time()
        return payload

    @staticmethod
    def _answer(request, handle: JobHandle, wait_s: float):
        if handle.wait(wait_s):
            return http_util.Respond(request, handle.value(), JSON_MIME)
        return http_util.Respond(request, wire.to_json(handle.wire()), JSON_MIME, code=202)

    @wrappers.Request.application
    def openapi_route(self, request):
        """The OpenAPI 3.1 description of these routes (``api/openapi.py``)."""
        return http_util.Respond(request, _openapi_json(), JSON_MIME)

    @wrappers.Request.application
    def index_js_route(self, request):
        """The frontend's module. TensorBoard asks for it when the user opens the tab: the
        default graph's build starts now (``warmup.Warmup.tab_opened``), not when the page,
        once loaded, asks for its scene."""
        if self.on_tab_opened is not None:
            self.on_tab_opened(plugin_util.experiment_id(request.environ))
        body, mime = static_files.read_static("index.js")
        return http_util.Respond(request, body, mime)

    @wrappers.Request.application
    def static_route(self, request):
        prefix = "/static/"
        path = request.path
        relative = path[path.index(prefix) + len(prefix):] if prefix in path else ""
        body, mime = static_files.read_static(relative)
        return http_util.Respond(request, body, mime)


@functools.cache
def _openapi_json() -> str:
    return json.dumps(openapi.spec(), indent=1)


def scene_args(ref: wire.GraphRef, expanded: list[str], extract: bool = True, floating: bool = True,
               first_view: bool = False) -> dict:
    """The arguments of a ``scene`` job (part of its key: keep them canonical). The defaults
    are those of a request without ``extract``/``float``, as the frontend sends by default;
    ``first_view`` (a request without ``expanded``): the server opens the dominant groups."""
    args = {"graph": wire.to_plain(ref), "expanded": sorted(set(expanded)), "extract": extract, "float": floating}
    if first_view:
        args["first_view"] = True
    return args


def _upload_body(request, limit: int) -> bytes:
    """The posted file as one ``bytes``, read once: at most ``limit + 1`` bytes (so that a larger
    upload is seen, and refused by the store).

    With a Content-Length, ``read(n)`` of the WSGI input itself, ``n`` = that length capped at
    ``limit + 1`` (PEP 3333: an application may read up to CONTENT_LENGTH bytes; werkzeug's
    ``request.stream`` bounds reads the same way): a socket's buffered reader fills one ``bytes``
    directly, werkzeug's test client hands back its own buffer. ``request.stream.read`` would read
    into a bytearray and copy that into ``bytes``: a second copy of the upload, 30-80 ms at 50 MB
    here. Without a Content-Length (chunked transfer), ``request.stream``, which decodes it.

    Post-condition: ``len(result) == min(Content-Length, limit + 1)``, or
    ``errors.InvalidArgumentError`` when the body ends before its Content-Length.
    """
    length = request.content_length
    if length is None:
        return request.stream.read(limit + 1)
    want = min(length, limit + 1)
    blob = request.input_stream.read(want)
    if len(blob) < want:
        raise errors.InvalidArgumentError(
            f"upload ended after {len(blob)} of its {length} bytes (Content-Length): the client sent less"
        )
    return blob


def _on_off(args, name: str, default: str = "on") -> bool:
    value = args.get(name, default)
    if value not in ("on", "off"):
        raise errors.InvalidArgumentError(f"query parameter `{name}` must be on or off, got {value!r}")
    return value == "on"


def _context(request):
    return plugin_util.context(request.environ), plugin_util.experiment_id(request.environ)
