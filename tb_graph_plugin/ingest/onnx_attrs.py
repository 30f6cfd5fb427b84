"""ONNX types and attributes -> TensorFlow's: ``AttrValue``s, ``TensorShapeProto``s, ``DataType``s.

Part of reading ``.onnx`` files (``onnx_model``), after [ONNX-PROTO] in ``docs/references.md``:
``TensorProto.DataType`` codes map to TF ``DataType`` enums where TF has the type;
``AttributeProto`` values become ``AttrValue``s by their ``type`` (or, in files that leave it
unset, by the field that is set): numbers, strings and lists of them as they are (a list longer
than 256 items, a string longer than 4096 bytes: summarised / cut), tensors as
``tensor float32[8,3,3,3]`` and subgraphs as ``graph 'then_branch': 12 nodes`` (never their data).

Pre-condition: messages of the ``onnx_proto`` subset. Post-condition: nothing raises on any
value protobuf decoded; ``attr_value`` is None for an attribute that holds nothing.
"""

from __future__ import annotations

from typing import Optional

from tensorboard.compat.proto import attr_value_pb2, tensor_shape_pb2

from tb_graph_plugin.ingest.onnx_proto import text

__all__ = ["attr_value", "shape", "tf_dtype", "dtype_name"]

# ONNX TensorProto.DataType -> (name, TF DataType enum); 0 where TF has no such type
_DTYPES = {
    1: ("float32", 1), 2: ("uint8", 4), 3: ("int8", 6), 4: ("uint16", 17), 5: ("int16", 5), 6: ("int32", 3),
    7: ("int64", 9), 8: ("string", 7), 9: ("bool", 10), 10: ("float16", 19), 11: ("float64", 2),
    12: ("uint32", 22), 13: ("uint64", 23), 14: ("complex64", 8), 15: ("complex128", 18), 16: ("bfloat16", 14),
    17: ("float8e4m3fn", 25), 18: ("float8e4m3fnuz", 26), 19: ("float8e5m2", 24), 20: ("float8e5m2fnuz", 28),
    21: ("uint4", 30), 22: ("int4", 29), 23: ("float4e2m1", 33), 24: ("float8e8m0", 0), 25: ("uint2", 32),
    26: ("int2", 31), 27: ("float6e2m3", 0), 28: ("float6e3m2", 0),
}
_MAX_LIST = 256  # longer attribute lists are summarised as text
_MAX_TEXT = 4096  # bytes of a string attribute kept


def shape(dims) -> tensor_shape_pb2.TensorShapeProto:
    out = tensor_shape_pb2.TensorShapeProto()
    for d in dims:
        if isinstance(d, int):
            out.dim.add(size=d if d >= 0 else -1)
        else:  # a symbolic dimension (dim_param)
            out.dim.add(size=-1, name=d)
    return out


def _tensor_summary(t) -> str:
    dims = ",".join(str(d) for d in t.dims[:64]) + (",…" if len(t.dims) > 64 else "")
    return f"tensor {dtype_name(t.data_type)}[{dims}]"


def _list_summary(head: list, total: int, kind: str) -> bytes:
    return f"{total} {kind}: [{', '.join(str(v) for v in head)}, …]".encode()


_SCALAR_FIELDS = ((1, "f"), (2, "i"), (3, "s"), (4, "t"), (5, "g"))
_LIST_FIELDS = ((6, "floats"), (7, "ints"), (8, "strings"), (9, "tensors"), (10, "graphs"))


def _attr_kind(a) -> int:
    """``AttributeProto.type``, or (files that leave it unset) the field that is set."""
    if a.type:
        return a.type
    for kind, field in _SCALAR_FIELDS:
        if a.HasField(field):
            return kind
    for kind, field in _LIST_FIELDS:
        if len(getattr(a, field)):
            return kind
    return 0


def attr_value(a) -> Optional[attr_value_pb2.AttrValue]:
    """An ONNX AttributeProto as an AttrValue (data summarised); None when it holds nothing."""
    v = attr_value_pb2.AttrValue()
    kind = _attr_kind(a)
    if kind == 1:
        v.f = a.f
    elif kind == 2:
        v.i = a.i
    elif kind == 3:
        v.s = a.s[:_MAX_TEXT]
    elif kind == 4:
        v.s = _tensor_summary(a.t).encode()
    elif kind == 5:
        v.s = f"graph {text(a.g.name)!r}: {len(a.g.node)} nodes".encode()
    elif kind in (6, 7):
        values = a.floats if kind == 6 else a.ints
        if len(values) > _MAX_LIST:
            v.s = _list_summary(list(values[:8]), len(values), "floats" if kind == 6 else "ints")
        else:
            (v.list.f if kind == 6 else v.list.i).extend(values)
            v.list.SetInParent()
    elif kind == 8:
        if len(a.strings) > _MAX_LIST:
            v.s = _list_summary([text(x[:64]) for x in a.strings[:8]], len(a.strings), "strings")
        else:
            v.list.s.extend(x[:_MAX_TEXT] for x in a.strings)
            v.list.SetInParent()
    elif kind == 9:
        v.s = "; ".join(_tensor_summary(t) for t in a.tensors[:8]).encode()
    elif kind == 10:
        v.s = f"{len(a.graphs)} graphs".encode()
    elif kind in (11, 12):
        v.s = b"sparse tensor"
    elif kind in (13, 14):
        v.s = b"type"
    else:
        return None
    return v


def tf_dtype(code: int) -> int:
    """The TF ``DataType`` of ONNX type ``code``; 0 (``DT_INVALID``) where TF has none."""
    return _DTYPES.get(code, ("", 0))[1]


def dtype_name(code: int) -> str:
    return _DTYPES.get(code, (f"type{code}", 0))[0]
