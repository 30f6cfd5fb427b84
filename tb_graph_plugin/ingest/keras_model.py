"""Keras ``model.to_json()`` -> GraphDef: the conceptual graph.

Follows the stock converter's rules ([TB-SRC] ``tensorboard/plugins/graph/keras_util.py``, see
docs/references.md), written anew:

- layers are visited in preorder; a layer becomes node ``<model>/<layer>`` (nested models add
  their name as a scope and get no node of their own);
- attrs ``keras_class`` (the layer's class name) and ``dtype`` (from ``config.dtype``, or
  ``config.dtype.config.name`` for a dtype policy); ``_keras_config``: JSON of the config keys
  ``CONFIG_KEYS`` the layer has and its ``build_config`` shapes (``input_shape``,
  an attention layer's ``query_shape``...), what the layer's parameter count is made from;
- inputs come from ``inbound_nodes[*].args`` Keras tensors' ``keras_history[:3]``
  (``[layer, node_index, tensor_index]``); an input naming a nested model is remapped to that
  model's output layer; a Sequential layer's input is the previous layer;
- a nested functional model's input layers are wired to what feeds the model.

Pre-condition: ``model_json`` is the parsed JSON of ``model.to_json()``.
Post-condition: a GraphDef with one node per non-model layer; raises
``errors.InvalidArgumentError`` naming the problem for JSON that is not a Keras model.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

from tensorboard import errors
from tensorboard.compat.proto import graph_pb2
from tensorboard.compat.tensorflow_stub import dtypes

from tb_graph_plugin.ingest import nesting

__all__ = ["keras_json_to_graph_def"]


def keras_json_to_graph_def(blob: bytes, what: str, layer_configs: bool = True) -> graph_pb2.GraphDef:
    """The conceptual graph of a Keras ``model.to_json()`` (module docstring); ``layer_configs``
    False: without ``_keras_config`` attrs (the stock-compatible ``/graph``, as the stock plugin writes it)."""
    try:
        raw = bytes(blob)  # decoded as ``json.loads`` decodes bytes
        text = raw.decode(json.detect_encoding(raw), "surrogatepass")
        depth = nesting.json_depth(text)
        if depth > nesting.MAX_JSON_DEPTH:  # the decoder (and ``_walk``) recurse per level
            raise errors.InvalidArgumentError(
                f"{what} is not a Keras model this server reads: its JSON nests {depth:,} levels deep, "
                f"more than the limit of {nesting.MAX_JSON_DEPTH}"
            )
        model = json.loads(text)
    except (ValueError, UnicodeDecodeError) as e:
        raise errors.InvalidArgumentError(f"{what} is not valid JSON: {e}") from None
    if not isinstance(model, dict) or not isinstance(model.get("config"), dict):
        raise errors.InvalidArgumentError(f"{what} is not a Keras model: no 'config' object")
    try:
        return _convert(model, layer_configs)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as e:
        raise errors.InvalidArgumentError(
            f"{what}: unsupported Keras model JSON ({type(e).__name__}: {e})"
        ) from None


def _scoped(scope: str, name: str) -> str:
    return f"{scope}/{name}" if scope else name


def _is_model(layer: dict) -> bool:
    return layer["config"].get("layers") is not None


def _walk(layer: dict, scope: str = "") -> Iterator[tuple[str, dict]]:
    """Preorder (scope, layer) pairs; a model's children get the model's name as scope."""
    yield scope, layer
    children = layer["config"].get("layers")
    if children:
        child_scope = _scoped(scope, layer["config"]["name"])
        for child in children:
            yield from _walk(child, child_scope)


def _keras_histories(args: Any) -> Iterator[list]:
    """The ``keras_history`` of each Keras tensor in ``args`` (a list, possibly nested one level)."""
    for arg in args:
        items = arg if isinstance(arg, list) else [arg]
        for item in items:
            if not isinstance(item, dict):
                continue
            history = item.get("config", {}).get("keras_history", [])
            if len(history) >= 3:
                yield history[:3]


def _inbound(layer: dict) -> list[list]:
    found: list[list] = []
    for node in layer.get("inbound_nodes") or []:
        if isinstance(node, dict):  # Keras 3; Keras 2 lists are not read (as in the stock plugin)
            found.extend(_keras_histories(node.get("args", [])))
    return found


def _as_list_of_layers(value: list) -> list[list]:
    return value if isinstance(value[0], list) else [value]


def _dtype_enum(dtype_or_policy: Any):
    dtype = dtype_or_policy
    if isinstance(dtype_or_policy, dict) and "config" in dtype_or_policy:
        dtype = dtype_or_policy["config"].get("name")
    if dtype is None or isinstance(dtype, dict):
        return None
    try:
        return dtypes.as_dtype(dtype).as_datatype_enum
    except TypeError:
        return None


def _convert(model: dict, layer_configs: bool = True) -> graph_pb2.GraphDef:
    graph = graph_pb2.GraphDef()
    input_feeds: dict[str, str] = {}  # nested model input layer -> the node feeding the model
    model_outputs: dict[str, list[str]] = {}  # nested model name -> its output layer nodes
    previous = None  # the previous node, for Sequential wiring

    for scope, layer in _walk(model):
        config = layer["config"]
        if _is_model(layer):
            previous = _register_model(scope, layer, input_feeds, model_outputs, previous)
            continue
        node = graph.node.add()
        node.name = _scoped(scope, config["name"])
        if layer.get("class_name") is not None:
            node.attr["keras_class"].s = layer["class_name"].encode("ascii")
        kept = _kept_config(layer) if layer_configs else None
        if kept:
            node.attr["_keras_config"].s = json.dumps(kept, separators=(",", ":")).encode()
        dtype = _dtype_enum(config.get("dtype"))
        if dtype is not None:
            node.attr["dtype"].type = dtype
        if layer.get("inbound_nodes") is not None:
            for name, _, index in _inbound(layer):
                sources = model_outputs.get(_scoped(scope, name), [_scoped(scope, name)])
                node.input.append(sources[index] if index < len(sources) else sources[-1])
        elif previous is not None:
            node.input.append(previous)
        if node.name in input_feeds:
            node.input.append(input_feeds[node.name])
        previous = node.name
    return graph


#: The config keys kept in ``_keras_config`` (what ``graph.cost_keras`` counts parameters from).
CONFIG_KEYS = ("units", "filters", "kernel_size", "groups", "use_bias", "depth_multiplier", "center", "scale",
               "axis", "input_dim", "output_dim", "num_heads", "key_dim", "value_dim", "output_shape",
               "data_format", "use_gamma", "use_beta")
_BUILD_SHAPES = ("input_shape", "query_shape", "value_shape", "key_shape")


def _kept_config(layer: dict) -> dict:
    """The config keys a layer's parameter count is made from, and its build shapes."""
    config = layer["config"]
    kept = {k: config[k] for k in CONFIG_KEYS if k in config and isinstance(config[k], (int, float, str, list, bool))}
    build = layer.get("build_config")
    if isinstance(build, dict):
        for shapes in (build, build.get("shapes_dict")):  # an attention layer's are in ``shapes_dict``
            if isinstance(shapes, dict):
                kept.update({k: shapes[k] for k in _BUILD_SHAPES if isinstance(shapes.get(k), list)})
    return kept


def _register_model(scope, layer, input_feeds, model_outputs, previous):
    config = layer["config"]
    name = _scoped(scope, config["name"])
    input_layers = config.get("input_layers")
    output_layers = config.get("output_layers")
    inbound = _inbound(layer)
    functional = bool(input_layers and output_layers)
    if functional:
        input_layers = [entry[0] for entry in _as_list_of_layers(input_layers)]
    if inbound and functional:
        for input_layer, source in zip(input_layers, inbound):
            input_feeds[_scoped(name, input_layer)] = _scoped(scope, source[0])
    elif inbound:
        previous = _scoped(scope, inbound[0][0])
    elif previous and functional:
        if len(input_layers) != 1:
            raise ValueError(
                f"multi-input functional model {name!r} inside a non-functional model"
            )
        input_feeds[_scoped(name, input_layers[0])] = previous
    if functional:
        model_outputs[name] = [_scoped(name, out[0]) for out in _as_list_of_layers(output_layers)]
    else:
        model_outputs[name] = [_scoped(name, config["layers"][-1]["config"]["name"])]
    return previous
