"""ONNX ``ModelProto`` bytes -> protobuf messages, without the ``onnx`` package.

The server reads ``.onnx`` files (``torch.onnx.export``) with the protobuf runtime TensorBoard
already brings: the part of ``onnx.proto`` ([ONNX-PROTO] in ``docs/references.md``) this plugin
reads is declared here as a ``FileDescriptorProto``, built once into a private
``DescriptorPool`` (so it never clashes with the real ``onnx`` package's ``onnx.ModelProto`` in
the same process), and parsed by protobuf's own C parser. Field numbers and types are those of
``onnx.proto`` (checked against onnx 1.23's copy). Every other field (tensor data, training
info, sparse initializers, ...) is an unknown field to this subset: skipped, never decoded.
Text fields are declared ``bytes`` (wire-compatible with ``string``) so malformed UTF-8 in a
name is replaced, not fatal; enums are declared ``int32`` (wire-compatible) so a value this
subset does not know is kept as a number.

Pre-condition: ``blob`` is bytes-like. Post-conditions: ``decode_model`` returns a ModelProto
message with a graph, or raises ``errors.InvalidArgumentError`` saying what the bytes are not
(protobuf's own parse error: truncation, bad wire types, nesting past its recursion limit);
``looks_like_onnx`` is a cheap guess from the name and the first bytes, made before parsing.
"""

from __future__ import annotations

import functools
from typing import Optional

from google.protobuf import descriptor_pb2, descriptor_pool, message, message_factory
from tensorboard import errors

from tb_graph_plugin.ingest import proto_scan

__all__ = ["decode_model", "looks_like_onnx", "text"]

_F = descriptor_pb2.FieldDescriptorProto
_PACKAGE = "onnx"  # in a private pool: no clash with the onnx package's own onnx.ModelProto
_OPTIONAL, _REPEATED = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED
_INT64, _INT32, _FLOAT, _BYTES, _MESSAGE = _F.TYPE_INT64, _F.TYPE_INT32, _F.TYPE_FLOAT, _F.TYPE_BYTES, _F.TYPE_MESSAGE

# message name -> [(field name, number, label, type, message type name or None)], from onnx.proto
_SUBSET = {
    "ModelProto": [
        ("ir_version", 1, _OPTIONAL, _INT64, None),
        ("producer_name", 2, _OPTIONAL, _BYTES, None),
        ("producer_version", 3, _OPTIONAL, _BYTES, None),
        ("graph", 7, _OPTIONAL, _MESSAGE, "GraphProto"),
        ("opset_import", 8, _REPEATED, _MESSAGE, "OperatorSetIdProto"),
    ],
    "OperatorSetIdProto": [("domain", 1, _OPTIONAL, _BYTES, None), ("version", 2, _OPTIONAL, _INT64, None)],
    "GraphProto": [
        ("node", 1, _REPEATED, _MESSAGE, "NodeProto"),
        ("name", 2, _OPTIONAL, _BYTES, None),
        ("initializer", 5, _REPEATED, _MESSAGE, "TensorProto"),
        ("input", 11, _REPEATED, _MESSAGE, "ValueInfoProto"),
        ("output", 12, _REPEATED, _MESSAGE, "ValueInfoProto"),
        ("value_info", 13, _REPEATED, _MESSAGE, "ValueInfoProto"),
    ],
    "NodeProto": [
        ("input", 1, _REPEATED, _BYTES, None),
        ("output", 2, _REPEATED, _BYTES, None),
        ("name", 3, _OPTIONAL, _BYTES, None),
        ("op_type", 4, _OPTIONAL, _BYTES, None),
        ("attribute", 5, _REPEATED, _MESSAGE, "AttributeProto"),
        ("doc_string", 6, _OPTIONAL, _BYTES, None),
        ("domain", 7, _OPTIONAL, _BYTES, None),
        ("metadata_props", 9, _REPEATED, _MESSAGE, "StringStringEntryProto"),
    ],
    "AttributeProto": [
        ("name", 1, _OPTIONAL, _BYTES, None),
        ("f", 2, _OPTIONAL, _FLOAT, None),
        ("i", 3, _OPTIONAL, _INT64, None),
        ("s", 4, _OPTIONAL, _BYTES, None),
        ("t", 5, _OPTIONAL, _MESSAGE, "TensorProto"),
        ("g", 6, _OPTIONAL, _MESSAGE, "GraphProto"),
        ("floats", 7, _REPEATED, _FLOAT, None),
        ("ints", 8, _REPEATED, _INT64, None),
        ("strings", 9, _REPEATED, _BYTES, None),
        ("tensors", 10, _REPEATED, _MESSAGE, "TensorProto"),
        ("graphs", 11, _REPEATED, _MESSAGE, "GraphProto"),
        ("type", 20, _OPTIONAL, _INT32, None),  # AttributeType
    ],
    "ValueInfoProto": [("name", 1, _OPTIONAL, _BYTES, None), ("type", 2, _OPTIONAL, _MESSAGE, "TypeProto")],
    "TypeProto": [("tensor_type", 1, _OPTIONAL, _MESSAGE, "TypeProto_Tensor")],
    "TypeProto_Tensor": [
        ("elem_type", 1, _OPTIONAL, _INT32, None),  # TensorProto.DataType
        ("shape", 2, _OPTIONAL, _MESSAGE, "TensorShapeProto"),
    ],
    "TensorShapeProto": [("dim", 1, _REPEATED, _MESSAGE, "TensorShapeProto_Dimension")],
    "TensorShapeProto_Dimension": [
        ("dim_value", 1, _OPTIONAL, _INT64, None),
        ("dim_param", 2, _OPTIONAL, _BYTES, None),
    ],
    "TensorProto": [
        ("dims", 1, _REPEATED, _INT64, None),
        ("data_type", 2, _OPTIONAL, _INT32, None),
        ("name", 8, _OPTIONAL, _BYTES, None),
    ],
    "StringStringEntryProto": [("key", 1, _OPTIONAL, _BYTES, None), ("value", 2, _OPTIONAL, _BYTES, None)],
}


@functools.lru_cache(maxsize=1)
def _model_class():
    """The ModelProto message class of the subset (built on first use, then kept)."""
    file = descriptor_pb2.FileDescriptorProto(name="tb_graph_plugin/onnx_subset.proto", package=_PACKAGE,
                                              syntax="proto2")
    for name, fields in _SUBSET.items():
        msg = file.message_type.add(name=name)
        for field, number, label, kind, type_name in fields:
            f = msg.field.add(name=field, number=number, label=label, type=kind)
            if type_name:
                f.type_name = f".{_PACKAGE}.{type_name}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.ModelProto"))


def text(raw: bytes) -> str:
    """A text field of the subset (declared ``bytes``) as ``str``; bad UTF-8 replaced."""
    return raw.decode("utf-8", "replace")


def looks_like_onnx(blob, filename: Optional[str] = None) -> bool:
    """True for a ``.onnx`` file name, or bytes that start the way a serialized ModelProto does.

    Serializers write fields in number order, so a ModelProto opens with ``ir_version`` (field 1,
    a varint: byte ``0x08``) and reaches ``graph`` (field 7) within its first seven fields; a
    binary GraphDef opens with a length-delimited field, a pbtxt and an event file with other
    bytes. Only those first fields are walked (``proto_scan.fields``), never the whole buffer.
    """
    if filename and filename.lower().endswith(".onnx"):
        return True
    if not blob or blob[0] != 0x08:
        return False
    try:
        for count, (number, wire_type, _) in enumerate(proto_scan.fields(blob)):
            if number == 7 and wire_type == proto_scan.LEN:
                return True
            if count >= 7 or number > 7:
                return False
    except ValueError:
        return False
    return False


def decode_model(blob, what: str):
    """The ModelProto subset of ``blob``; ``errors.InvalidArgumentError`` when it is not one."""
    if not blob:
        raise errors.InvalidArgumentError(f"{what} is empty")
    model = _model_class()()
    try:
        model.ParseFromString(bytes(blob) if isinstance(blob, memoryview) else blob)
    except (message.DecodeError, RuntimeError, ValueError, RecursionError) as e:
        raise errors.InvalidArgumentError(f"{what} is not an ONNX model: not a binary ModelProto ({e})") from None
    if not model.HasField("graph"):
        raise errors.InvalidArgumentError(f"{what} is not an ONNX model: the ModelProto holds no graph")
    graph = model.graph
    if not (graph.node or graph.initializer or graph.input or graph.output):
        raise errors.InvalidArgumentError(f"{what} is an ONNX model whose graph holds no nodes")
    return model
