"""Query-parameter parsing shared by the routes: each bad value is an ``InvalidArgumentError``."""

from __future__ import annotations

import json
from typing import Optional

from tensorboard import errors

from tb_graph_plugin import metadata
from tb_graph_plugin import wire
from tb_graph_plugin.ingest import nesting

__all__ = ["required", "optional_int", "optional_float", "graph_ref", "string_list"]


def required(args, name: str) -> str:
    value = args.get(name)
    if value is None or value == "":
        raise errors.InvalidArgumentError(f'query parameter "{name}" is required')
    return value


def optional_int(args, name: str) -> Optional[int]:
    value = args.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise errors.InvalidArgumentError(
            f"query parameter `{name}` must be an integer, got {value!r}"
        ) from None


def optional_float(args, name: str) -> Optional[float]:
    value = args.get(name)
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not number >= 0:
        raise errors.InvalidArgumentError(f"query parameter `{name}` must be a number >= 0, got {value!r}")
    return number


def graph_ref(args, prefix: str = "") -> wire.GraphRef:
    """``run``, ``tag`` (default: the run graph), ``kind`` (default ``op``), ``step`` (default latest);
    each name preceded by ``prefix`` (``base_run``, ... for the base graph of ``/diff``)."""
    run = required(args, prefix + "run")
    tag = args.get(prefix + "tag") or metadata.RUN_GRAPH_TAG
    kind_name = args.get(prefix + "kind") or wire.GraphKind.OP.value
    try:
        kind = wire.GraphKind(kind_name)
    except ValueError:
        known = ", ".join(k.value for k in wire.GraphKind)
        raise errors.InvalidArgumentError(
            f"query parameter `{prefix}kind` must be one of {known}, got {kind_name!r}"
        ) from None
    return wire.GraphRef(run=run, tag=tag, kind=kind, step=optional_int(args, prefix + "step"))


def string_list(args, name: str) -> list[str]:
    """A JSON array of strings, e.g. ``expanded=["a","a/b"]``; absent means empty. Its nesting is
    measured before it is decoded: the decoder recurses per level (``nesting``)."""
    value = args.get(name)
    if not value:
        return []
    depth = nesting.json_depth(value)
    if depth > nesting.MAX_JSON_DEPTH:
        raise errors.InvalidArgumentError(
            f"query parameter `{name}` must be a JSON array of strings, got JSON nested {depth:,} levels "
            f"deep (more than the limit of {nesting.MAX_JSON_DEPTH})"
        )
    try:
        parsed = json.loads(value)
    except ValueError:
        parsed = None
    if not isinstance(parsed, list) or not all(isinstance(v, str) for v in parsed):
        raise errors.InvalidArgumentError(
            f"query parameter `{name}` must be a JSON array of strings, got {value[:80]!r}"
        )
    return parsed
