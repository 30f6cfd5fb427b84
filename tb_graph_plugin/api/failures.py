"""How a route's failures are answered: never werkzeug's HTML page, never without a trace.

- ``json_errors`` (our JSON routes): a ``tensorboard.errors.PublicError`` -> ``{"error": ...}``
  with its status (400, 404, 413, a job's 500). A 5xx also names a request id, logged with it.
- ``guarded`` (every route, outermost): any other exception -> a JSON 500 ``ErrorAnswer`` whose
  ``error`` and ``request_id`` (and header ``X-Request-Id``) name a fresh request id; the log
  holds the traceback under the same id. A ``PublicError`` passes through: the stock-compatible
  routes answer it as TensorBoard does (text/plain), our routes have answered it already.

Post-condition: a route wrapped by ``guarded`` raises nothing but ``PublicError``s; every 5xx it
answers is JSON with a ``request_id`` that the log also holds.
"""

from __future__ import annotations

import functools
import logging
import uuid

from tensorboard import errors
from tensorboard.backend import http_util
from werkzeug import wrappers

from tb_graph_plugin import wire

__all__ = ["JSON_MIME", "REQUEST_ID_HEADER", "guarded", "json_errors", "new_request_id"]

JSON_MIME = "application/json"
REQUEST_ID_HEADER = "X-Request-Id"

logger = logging.getLogger(__name__)


def new_request_id() -> str:
    return uuid.uuid4().hex[:16]


def _described(request) -> str:
    """Method and path with its query, cut at 300 characters (a hostile query may be huge)."""
    path = request.full_path
    return f"{request.method} {path[:300]}" + (f"... ({len(path):,} characters)" if len(path) > 300 else "")


def _respond(request, error: str, code: int, request_id=None, headers=()):
    body = wire.to_json(wire.ErrorAnswer(error=error, request_id=request_id))
    if request_id is not None:
        headers = [*headers, (REQUEST_ID_HEADER, request_id)]
    return http_util.Respond(request, body, JSON_MIME, code=code, headers=list(headers))


def json_errors(route):
    """Answer a ``PublicError`` raised by ``route(self, request)`` as a JSON ``ErrorAnswer``."""

    @functools.wraps(route)
    def wrapper(self, request):
        try:
            return route(self, request)
        except errors.PublicError as e:
            if e.http_code < 500:
                return _respond(request, str(e), e.http_code)
            # a job's failure (its worker died, a stage ran out of time)
            request_id = new_request_id()
            logger.error("graph_explorer: %s answered %d (request id %s): %s",
                         _described(request), e.http_code, request_id, e)
            return _respond(request, f"{e} (request id {request_id})", e.http_code, request_id)

    return wrapper


def guarded(app):
    """The WSGI app ``app`` (a route), answering any unexpected exception as a JSON 500."""

    @functools.wraps(app)
    def wrapper(environ, start_response):
        try:
            return app(environ, start_response)
        except errors.PublicError:
            raise
        except Exception as e:  # noqa: BLE001 - answered with an id, logged with its traceback
            request = wrappers.Request(environ)
            request_id = new_request_id()
            logger.exception("graph_explorer: %s failed (request id %s)", _described(request), request_id)
            error = (f"internal error ({type(e).__name__}) answering {request.path}; request id {request_id} "
                     "(the TensorBoard log has the details under it)")
            return _respond(request, error, 500, request_id)(environ, start_response)

    return wrapper
