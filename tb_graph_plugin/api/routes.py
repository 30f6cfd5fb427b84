"""The route table: each route validates its parameters, calls an ``*_impl``, and responds.

Every route is documented in ``tb_graph_plugin/http_api.md``. Stock-compatible routes answer
errors as TensorBoard does (text/plain, via ``tensorboard.errors``); our JSON routes answer
``{"error": "<message>"}`` with the same status code.
"""

from __future__ import annotations

import functools

from tensorboard import errors, plugin_util
from tensorboard.backend import http_util
from werkzeug import wrappers

from tb_graph_plugin.api import compat, params, static_files, wire
from tb_graph_plugin.ingest import listing
from tb_graph_plugin.ingest.store import GraphStore

__all__ = ["Routes"]

JSON_MIME = "application/json"


def _json_errors(route):
    """Answer a ``PublicError`` raised by ``route`` as JSON ``ErrorAnswer`` with its status."""

    @functools.wraps(route)
    def wrapper(self, request):
        try:
            return route(self, request)
        except errors.PublicError as e:
            body = wire.to_json(wire.ErrorAnswer(error=str(e)))
            return http_util.Respond(request, body, JSON_MIME, code=e.http_code)

    return wrapper


class Routes:
    def __init__(self, store: GraphStore, data_provider):
        self._store = store
        self._provider = data_provider

    def table(self):
        return {
            # The stock Graphs plugin's API.
            "/info": self.info_route,
            "/graph": self.graph_route,
            "/run_metadata": self.run_metadata_route,
            # Ours.
            "/graphs": self.graphs_route,
            "/upload": self.upload_route,
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
    @_json_errors
    def graphs_route(self, request):
        ctx, eid = _context(request)
        body = listing.listing(self._provider, ctx, eid)
        return http_util.Respond(request, wire.to_json(body), JSON_MIME)

    @wrappers.Request.application
    @_json_errors
    def upload_route(self, request):
        if request.method != "POST":
            body = wire.to_json(wire.ErrorAnswer(error="upload takes POST with the file as body"))
            return http_util.Respond(request, body, JSON_MIME, code=405, headers=[("Allow", "POST")])
        limit = self._store.upload_limit_bytes
        blob = request.stream.read(limit + 1)
        filename = request.args.get("filename") or "upload"
        answer = self._store.add_upload(blob, filename)
        return http_util.Respond(request, wire.to_json(answer), JSON_MIME)

    @wrappers.Request.application
    def index_js_route(self, request):
        body, mime = static_files.read_static("index.js")
        return http_util.Respond(request, body, mime)

    @wrappers.Request.application
    def static_route(self, request):
        prefix = "/static/"
        path = request.path
        relative = path[path.index(prefix) + len(prefix):] if prefix in path else ""
        body, mime = static_files.read_static(relative)
        return http_util.Respond(request, body, mime)


def _context(request):
    return plugin_util.context(request.environ), plugin_util.experiment_id(request.environ)
