"""ONNX model (``.onnx``, as ``torch.onnx.export`` writes it) -> GraphDef, without torch or onnx.

The bytes are decoded by ``onnx_proto`` (protobuf only); each node's scope comes from
``onnx_scopes`` (the module call that computed it), attribute values and types are converted by
``onnx_attrs``. The GraphDef follows the naming PyTorch
front ends of this plugin share ([TORCH-ONNX] in ``docs/references.md``):

- an op is ``<scope>/<OpType>``, made unique in its scope with ``_1``, ``_2``...; its ``op`` is
  ``onnx::<OpType>`` (another domain: ``<domain>::<OpType>``), a ``Constant`` node is ``Const``;
  files with no scope data (not written by torch) keep their node names;
- graph inputs are ``input/<name>`` and outputs ``output/<name>``, op ``IO Node`` (as torch's
  ``SummaryWriter.add_graph`` writes them), an output fed by its producer;
- an initializer named ``<module path>.<attr>`` is a ``Parameter`` in the scope of that module's
  first call, named ``<attr>`` (``.../Conv2d[conv1]/weight``); of a module no node ran in (a
  conv the exporter fused into its batch norm), in its nearest ancestor's, named by the rest of
  the path (``.../BasicBlock[0]/conv1.weight``); any other initializer (a constant the exporter
  folded: ``val_49``, ``onnx::Conv_48``) is a ``Const`` beside its first consumer;
- attrs: ``_output_shapes`` (from the graph's value types, where known), ``T`` (dtype of the
  first output) or ``dtype`` (parameters, constants, inputs and outputs), the ONNX attributes
  (numbers, strings and lists of them; tensors and subgraphs summarised, never their data; an
  attribute named like one of ours is kept as ``onnx.<name>``), ``_module_class``, ``_source``
  (``file:line in function``: the innermost frame outside torch), ``_onnx_name`` (the name in the
  file) and ``doc_string``.

Pre-condition: ``blob`` is bytes-like. Post-condition: a GraphDef with one node per ONNX node,
initializer, graph input and output, every name unique, every input naming a node of the graph;
or ``errors.InvalidArgumentError`` naming what is wrong, or ``GraphTooLarge`` past ``max_ops``
(checked before any node is built).
"""

from __future__ import annotations

from typing import Optional

from tensorboard.compat.proto import graph_pb2, tensor_shape_pb2

from tb_graph_plugin.ingest import onnx_proto, onnx_scopes
from tb_graph_plugin.ingest.onnx_attrs import attr_value, shape, tf_dtype
from tb_graph_plugin.ingest.onnx_proto import text
from tb_graph_plugin.ingest.too_large import GraphTooLarge

__all__ = ["onnx_to_graph_def", "read_onnx", "looks_like_onnx"]

looks_like_onnx = onnx_proto.looks_like_onnx

_DEFAULT_DOMAINS = ("", "ai.onnx")
_RESERVED = frozenset({"_output_shapes", "T", "dtype", "_module_class", "_source", "_onnx_name"})
_MAX_TEXT = 4096  # characters of a doc string kept


def onnx_to_graph_def(blob, what: str, max_ops: Optional[int] = None) -> graph_pb2.GraphDef:
    """The GraphDef of an ONNX model file (see the module docstring)."""
    return read_onnx(blob, what, max_ops)[0]


def read_onnx(blob, what: str, max_ops: Optional[int] = None) -> tuple[graph_pb2.GraphDef, str]:
    """``(GraphDef, source)``: ``source`` says what was read (``ONNX model (pytorch 2.13.0)``)."""
    model = onnx_proto.decode_model(blob, what)
    g = model.graph
    ops = len(g.node) + len(g.initializer) + len(g.input) + len(g.output)
    if max_ops is not None and ops > max_ops:
        raise GraphTooLarge(what, ops, max_ops)
    producer = " ".join(text(x) for x in (model.producer_name, model.producer_version) if x)
    return _Converter(g).graph_def(), f"ONNX model ({producer})" if producer else "ONNX model"


class _Converter:
    """One conversion: names first (every scope known before any leaf is named), then nodes."""

    def __init__(self, g):
        self.g = g
        self.types: dict[str, tuple[int, Optional[list]]] = {}  # value -> (elem_type, dims or None)
        for info in (*g.input, *g.output, *g.value_info):
            if info.type.HasField("tensor_type"):
                tt = info.type.tensor_type
                dims = None
                if tt.HasField("shape"):
                    dims = [d.dim_value if d.HasField("dim_value") else (text(d.dim_param) or -1)
                            for d in tt.shape.dim]
                self.types[text(info.name)] = (tt.elem_type, dims)
        self.placement = onnx_scopes.place(g)
        self.used: set[str] = set()
        self.counts: dict[tuple[str, str], int] = {}
        self.producer: dict[str, str] = {}  # value name -> "node" or "node:k"

    # -- names ---------------------------------------------------------------------------

    def _unique(self, scope: str, leaf: str, reserved: set[str]) -> str:
        leaf = leaf.replace("/", "_") or "node"
        k = self.counts.get((scope, leaf), 0)
        while True:
            name = f"{scope}/{leaf}" if scope else leaf
            name = name if k == 0 else f"{name}_{k}"
            k += 1
            if name not in self.used and name not in reserved:
                self.counts[(scope, leaf)] = k
                self.used.add(name)
                return name

    def _parameter_home(self, name: str) -> Optional[tuple[str, str, Optional[str]]]:
        """``(scope, leaf, class)`` of initializer ``<module path>.<attr>``; None for others."""
        modules = self.placement.modules
        if "." not in name or not modules:
            return None
        path, leaf = name, ""
        while "." in path:
            path, tail = path.rsplit(".", 1)
            leaf = f"{tail}.{leaf}" if leaf else tail
            if path in modules:
                scope, cls = modules[path]
                return scope, leaf, cls
        if self.placement.root:
            return self.placement.root, name, modules.get("", (None, None))[1]
        return None

    # -- the GraphDef ----------------------------------------------------------------------

    def graph_def(self) -> graph_pb2.GraphDef:
        g, placement = self.g, self.placement
        initializers = {text(t.name): t for t in g.initializer}
        scopes = self._place_unscoped(list(placement.scopes))
        consumer_scope: dict[str, str] = {}
        for i, node in enumerate(g.node):
            for value in node.input:
                consumer_scope.setdefault(text(value), scopes[i])
        reserved = {s[: j] for s in set(scopes) if s for j in _slash_ends(s)}  # no op takes a scope's name
        reserved |= {"input", "output"}

        out = graph_pb2.GraphDef()
        for info in g.input:
            name = text(info.name)
            if name in initializers or name in self.producer:
                continue
            node = out.node.add(name=self._unique("input", name, set()), op="IO Node")
            self._io_attrs(node, name)
            self.producer[name] = node.name
        for name, t in initializers.items():
            self._initializer(out, name, t, consumer_scope, reserved)
        nodes = []
        for i, onnx_node in enumerate(g.node):
            nodes.append(self._op(out, onnx_node, scopes[i], i, reserved))
        for onnx_node, node in zip(g.node, nodes):
            for value in onnx_node.input:
                source = self.producer.get(text(value))
                if source is not None:
                    node.input.append(source)
        for info in g.output:
            name = text(info.name)
            node = out.node.add(name=self._unique("output", name, set()), op="IO Node")
            self._io_attrs(node, name)
            if name in self.producer:
                node.input.append(self.producer[name])
        return out

    def _place_unscoped(self, scopes: list[Optional[str]]) -> list[str]:
        """Scopes for the nodes the TorchScript exporter wrote without one (the ``Identity``
        copies of shared weights, folded constants): the module of the parameter an output is
        named after, else the scope of the first consumer (nodes are in topological order, so
        a reverse pass sees consumers first), else the top level."""
        if self.placement.kind != "torchscript":
            return ["" if s is None else s for s in scopes]
        first_consumer: dict[str, int] = {}
        for i, node in enumerate(self.g.node):
            for value in node.input:
                first_consumer.setdefault(text(value), i)
        for i in reversed(range(len(scopes))):
            node = self.g.node[i]
            if scopes[i] is not None or not node.output:
                continue
            home = self._parameter_home(text(node.output[0]))
            if home:
                scopes[i] = home[0]
                continue
            consumers = [first_consumer[v] for v in map(text, node.output) if v in first_consumer]
            if consumers:
                scopes[i] = scopes[min(consumers)]
        return ["" if s is None else s for s in scopes]

    def _io_attrs(self, node, value: str) -> None:
        elem, dims = self.types.get(value, (0, None))
        if dims is not None:
            node.attr["_output_shapes"].list.shape.append(shape(dims))
        if tf_dtype(elem):
            node.attr["dtype"].type = tf_dtype(elem)

    def _initializer(self, out, name: str, t, consumer_scope: dict[str, str], reserved: set[str]) -> None:
        home = self._parameter_home(name) if self.placement.kind != "names" else None
        if home:
            scope, leaf, cls = home
            node = out.node.add(name=self._unique(scope, leaf, reserved), op="Parameter")
            if cls:
                node.attr["_module_class"].s = cls.encode()
        elif self.placement.kind == "names":
            node = out.node.add(name=self._unique(*_split(name), reserved), op="Const")
        else:
            node = out.node.add(name=self._unique(consumer_scope.get(name, self.placement.root), "Const", reserved),
                                op="Const")
        node.attr["_output_shapes"].list.shape.append(shape(t.dims))
        if tf_dtype(t.data_type):
            node.attr["dtype"].type = tf_dtype(t.data_type)
        node.attr["_onnx_name"].s = name.encode()
        self.producer[name] = node.name

    def _op(self, out, onnx_node, scope: str, i: int, reserved: set[str]):
        op_type, domain = text(onnx_node.op_type) or "Op", text(onnx_node.domain)
        constant = op_type == "Constant" and domain in _DEFAULT_DOMAINS
        op = "Const" if constant else f"{'onnx' if domain in _DEFAULT_DOMAINS else domain}::{op_type}"
        onnx_name = text(onnx_node.name)
        if self.placement.kind == "names" and onnx_name:
            name = self._unique(*_split(onnx_name), reserved)
        else:
            name = self._unique(scope, "Const" if constant else op_type, reserved)
        node = out.node.add(name=name, op=op)
        for a in onnx_node.attribute:
            key, value = text(a.name), attr_value(a)
            if key and value is not None:
                node.attr[f"onnx.{key}" if key in _RESERVED else key].CopyFrom(value)
        outputs = [text(v) for v in onnx_node.output]
        for k, value in enumerate(outputs):
            if value:
                self.producer[value] = name if k == 0 else f"{name}:{k}"
        if constant:
            self._constant_type(node, onnx_node)
        else:
            self._output_types(node, outputs)
        p = self.placement
        if p.module_class[i]:
            node.attr["_module_class"].s = p.module_class[i].encode()
        if p.source[i]:
            node.attr["_source"].s = p.source[i].encode()
        if onnx_name:
            node.attr["_onnx_name"].s = onnx_name.encode()
        if onnx_node.doc_string:
            node.attr["doc_string"].s = onnx_node.doc_string[:_MAX_TEXT]
        return node

    def _output_types(self, node, outputs: list[str]) -> None:
        known = [self.types.get(v) for v in outputs]
        if any(k and k[1] is not None for k in known):
            for k in known:
                known_shape = shape(k[1]) if k and k[1] is not None else tensor_shape_pb2.TensorShapeProto(unknown_rank=True)
                node.attr["_output_shapes"].list.shape.append(known_shape)
        if known and known[0] and tf_dtype(known[0][0]):
            node.attr["T"].type = tf_dtype(known[0][0])

    def _constant_type(self, node, onnx_node) -> None:
        for a in onnx_node.attribute:
            key = text(a.name)
            if key in ("value", "sparse_value") and a.HasField("t"):
                dims, elem = list(a.t.dims), a.t.data_type
            elif key in ("value_float", "value_int"):
                dims, elem = [], 1 if key == "value_float" else 7
            elif key in ("value_floats", "value_ints"):
                dims, elem = [len(a.floats) + len(a.ints)], 1 if key == "value_floats" else 7
            else:
                continue
            node.attr["_output_shapes"].list.shape.append(shape(dims))
            if tf_dtype(elem):
                node.attr["dtype"].type = tf_dtype(elem)
            return


def _split(name: str) -> tuple[str, str]:
    """``(scope, leaf)`` of a name kept as the file wrote it (empty ``/`` parts dropped)."""
    parts = [p for p in name.split("/") if p] or [name]
    return "/".join(parts[:-1]), parts[-1]


def _slash_ends(scope: str):
    """Ends of each prefix of ``scope`` (``a/b/c`` -> ends of ``a``, ``a/b``, ``a/b/c``)."""
    for j, ch in enumerate(scope):
        if ch == "/":
            yield j
    yield len(scope)
