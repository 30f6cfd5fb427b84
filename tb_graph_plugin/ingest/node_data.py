"""Per-node data: the summary's payload, Model Explorer's node-data JSON, and reading both back.

A node-data summary (``tb_graph_plugin.summary.node_data``) is a tensor summary of the plugin
``metadata.NODE_DATA`` (``data_class`` TENSOR, so the Rust data server keeps it too): at each
step, one string tensor holding JSON::

    {"names": ["Net/Linear[fc1]", ...], "values": [0.5, NaN, ...],
     "thresholds": [...], "gradient": [...]}          (the last two optional)

(``NaN`` / ``Infinity`` / ``-Infinity`` are written as the JSON tokens Python's ``json`` reads).
``thresholds`` and ``gradient`` are Model Explorer's colour settings, kept when its JSON was
imported. Model Explorer's node-data JSON (``model_explorer/node_data_builder.py``: a
``GraphNodeData`` ``{"results": {node id: {"value": v, ...}}, "thresholds": [...],
"gradient": [...]}``, or a ``ModelNodeData`` ``{graph id: GraphNodeData}``) is read by
``from_model_explorer``.

Reading goes through the data provider only (``list_tensors`` / ``read_tensors`` with
``plugin_name``), so it works under the multiplexer and ``--load_fast=true``.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Mapping, Optional

from tensorboard import errors

from tb_graph_plugin import metadata

__all__ = ["NodeValues", "encode", "decode", "from_model_explorer", "list_tags", "read_steps"]

# Steps read per tag: all the data provider keeps (TensorBoard keeps 10 per tag of a plugin it
# does not know unless --samples_per_plugin=graph_explorer_node_data=1000 says otherwise).
MAX_STEPS = 100_000


@dataclasses.dataclass
class NodeValues:
    """One step of node data: names and their values (same length), plus colour settings."""

    names: list[str]
    values: list[float]
    thresholds: list[dict] = dataclasses.field(default_factory=list)
    gradient: list[dict] = dataclasses.field(default_factory=list)


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise errors.InvalidArgumentError(f"{where}: value {value!r} is not a number")
    return float(value)


def _colour_items(items: Any, key: str, where: str) -> list[dict]:
    """Model Explorer's thresholds (``value``, ``bgColor``) or gradient (``stop``, ``bgColor``)."""
    if items is None:
        return []
    if not isinstance(items, list):
        raise errors.InvalidArgumentError(f"{where}: must be a list")
    out = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("bgColor", ""), str):
            raise errors.InvalidArgumentError(f"{where}: each item needs `{key}` and a `bgColor` string")
        out.append({key: _number(item.get(key), where), "bgColor": item.get("bgColor", "")})
    return out


def encode(values: Mapping[str, Any], thresholds: Optional[list] = None, gradient: Optional[list] = None) -> bytes:
    """The summary payload of one step (``values``: name -> number)."""
    names, numbers = [], []
    for name, value in values.items():
        if not isinstance(name, str):
            raise TypeError(f"node data names must be strings, got {name!r}")
        names.append(name)
        numbers.append(float(value) if not isinstance(value, bool) else _number(value, name))
    body: dict[str, Any] = {"names": names, "values": numbers}
    if thresholds:
        body["thresholds"] = _colour_items(thresholds, "value", "thresholds")
    if gradient:
        body["gradient"] = _colour_items(gradient, "stop", "gradient")
    return json.dumps(body, separators=(",", ":")).encode()


def decode(blob: bytes, where: str = "node data") -> NodeValues:
    """One step's payload; ``InvalidArgumentError`` naming ``where`` when it is not one."""
    try:
        body = json.loads(blob)
    except (ValueError, UnicodeDecodeError) as e:
        raise errors.InvalidArgumentError(f"{where} is not node data JSON ({e})") from None
    if not isinstance(body, dict) or not isinstance(body.get("names"), list) or not isinstance(body.get("values"), list):
        raise errors.InvalidArgumentError(f"{where} is not node data: needs `names` and `values` lists")
    names, values = body["names"], body["values"]
    if len(names) != len(values):
        raise errors.InvalidArgumentError(f"{where}: {len(names)} names but {len(values)} values")
    if not all(isinstance(n, str) for n in names):
        raise errors.InvalidArgumentError(f"{where}: names must be strings")
    numbers = [_number(v, where) for v in values]
    return NodeValues(names, numbers, _colour_items(body.get("thresholds"), "value", f"{where} thresholds"),
                      _colour_items(body.get("gradient"), "stop", f"{where} gradient"))


def from_model_explorer(blob: bytes, where: str = "node data file") -> dict[str, NodeValues]:
    """Model Explorer's node-data JSON: graph id (``""`` for a lone ``GraphNodeData``) -> values."""
    try:
        body = json.loads(blob)
    except (ValueError, UnicodeDecodeError) as e:
        raise errors.InvalidArgumentError(f"{where} is not JSON ({e})") from None
    if not isinstance(body, dict):
        raise errors.InvalidArgumentError(f"{where} is not Model Explorer node data: not a JSON object")
    graphs = {"": body} if "results" in body else body
    out: dict[str, NodeValues] = {}
    for graph_id, graph in graphs.items():
        if not isinstance(graph, dict) or not isinstance(graph.get("results"), dict):
            raise errors.InvalidArgumentError(
                f"{where} is not Model Explorer node data: {graph_id or 'it'!r} has no `results` object "
                "(expected {\"results\": {node id: {\"value\": number}}} or {graph id: {\"results\": ...}})")
        names, values = [], []
        for name, result in graph["results"].items():
            value = result.get("value") if isinstance(result, dict) else result
            names.append(name)
            values.append(_number(value, f"{where}: node {name!r}"))
        out[graph_id] = NodeValues(names, values, _colour_items(graph.get("thresholds"), "value", f"{where} thresholds"),
                                   _colour_items(graph.get("gradient"), "stop", f"{where} gradient"))
    if not out:
        raise errors.InvalidArgumentError(f"{where} holds no graph's node data")
    return out


def list_tags(provider, ctx, eid: str) -> dict[str, dict[str, tuple[int, float]]]:
    """run -> tag -> (last step, its wall time), for every node-data tag the data provider has
    (its metadata only: no payload is read)."""
    listed = provider.list_tensors(ctx, experiment_id=eid, plugin_name=metadata.NODE_DATA) or {}
    return {run: {tag: (ts.max_step, ts.max_wall_time) for tag, ts in tags.items()} for run, tags in listed.items()}


def read_steps(provider, ctx, eid: str, run: str, tag: str) -> dict[int, bytes]:
    """step -> payload of one node-data tag (the last written wins for a repeated step);
    404 for an unknown run or tag."""
    read = provider.read_tensors(ctx, experiment_id=eid, plugin_name=metadata.NODE_DATA,
                                 downsample=MAX_STEPS, run_tag_filter=_filter({run: [tag]}))
    data = read.get(run, {}).get(tag)
    if not data:
        raise errors.NotFoundError(f"no node data {tag!r} in run {run!r}")
    return {d.step: _payload(d.numpy) for d in sorted(data, key=lambda d: d.wall_time)}


def _payload(array) -> bytes:
    value = array.item() if getattr(array, "size", 0) == 1 else None
    return value if isinstance(value, bytes) else b""


def _filter(runs: dict):
    from tensorboard.data import provider as data_provider

    return data_provider.RunTagFilter(runs=list(runs), tags=sorted({t for tags in runs.values() for t in tags}))

