"""Serve the bundled frontend from ``tb_graph_plugin/static/``, safely.

Post-condition: only regular files inside the static folder are served (no ``..``, no absolute
paths, no symlinks out of it) with a MIME type from a fixed table; anything else is a 404.
"""

from __future__ import annotations

import os

from tensorboard import errors

__all__ = ["STATIC_DIR", "read_static"]

STATIC_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "static")

_MIME = {
    ".js": "application/javascript",
    ".mjs": "application/javascript",
    ".css": "text/css",
    ".html": "text/html",
    ".json": "application/json",
    ".map": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
}


def read_static(relative_path: str) -> tuple[bytes, str]:
    parts = relative_path.replace("\\", "/").split("/")
    if not relative_path or any(p in ("", ".", "..") for p in parts):
        raise errors.NotFoundError(f"no static file {relative_path!r}")
    root = os.path.realpath(STATIC_DIR)
    path = os.path.realpath(os.path.join(root, *parts))
    mime = _MIME.get(os.path.splitext(path)[1].lower())
    if os.path.commonpath([root, path]) != root or not os.path.isfile(path) or mime is None:
        raise errors.NotFoundError(f"no static file {relative_path!r}")
    with open(path, "rb") as f:
        return f.read(), mime
