"""The top-level fields of a serialized protobuf message, found without parsing the message.

A trace's RunMetadata holds each function graph up to four times (partition graphs, the graph
before and after optimization, and the top-level partition graphs): 82 MB for a 141k-op
training step, of which only ``function_graphs[0].pre_optimization_graph`` (21 MB) is shown.
An uploaded event file's run graph is the ``graph_def`` bytes of one Event: parsing that Event
copies the whole graph (50 MB: 40-100 ms here), and reading ``event.graph_def`` copies it again.
Walking the top-level fields of the encoding (protobuf encoding guide [PROTO-ENC] in
``docs/references.md``: a key varint ``field_number << 3 | wire_type``, then a varint, 8 or 4
bytes, or a length varint and that many bytes) finds such a payload in microseconds; it is
already a serialized message (a GraphDef), parsed once where it lies.

Pre-condition: ``buf`` is bytes-like. Post-conditions: ``fields`` yields every top-level field in
encoding order as ``(number, wire_type, value)``, ``value`` the decoded varint (an unsigned int)
or a zero-copy memoryview of the 8, 4 or length-delimited bytes; ``field_slices`` returns the
payloads of every occurrence of one length-delimited field, in order. Both raise ``ValueError``
(``fields`` when it reaches the damage) when the bytes are not a well-formed message at the top
level (callers then parse normally and report the protobuf library's own error).
"""

from __future__ import annotations

from typing import Iterator, Union

__all__ = ["VARINT", "I64", "LEN", "I32", "fields", "field_slices"]

VARINT, I64, LEN, I32 = 0, 1, 2, 5
_FIXED = {I64: 8, I32: 4}


def _varint(buf: memoryview, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise ValueError("truncated or overlong varint")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _walk(view: memoryview) -> Iterator[tuple[int, int, int, int, int]]:
    """Every top-level field as ``(number, wire_type, varint value or 0, payload start, end)``."""
    pos, end = 0, len(view)
    while pos < end:
        key, pos = _varint(view, pos)
        wire_type, number = key & 7, key >> 3
        if number == 0:
            raise ValueError("field number 0")
        value = 0
        if wire_type == VARINT:
            value, pos = _varint(view, pos)
            start = pos
        elif wire_type in _FIXED:
            start, pos = pos, pos + _FIXED[wire_type]
        elif wire_type == LEN:
            size, pos = _varint(view, pos)
            start, pos = pos, pos + size
        else:  # groups (3, 4) are not used by these messages
            raise ValueError(f"unsupported wire type {wire_type}")
        if pos > end:
            raise ValueError("field runs past the end of the message")
        yield number, wire_type, value, start, pos


def _view(buf) -> memoryview:
    return memoryview(buf).cast("B") if not isinstance(buf, memoryview) else buf


def fields(buf) -> Iterator[tuple[int, int, Union[int, memoryview]]]:
    """Every top-level field of message ``buf``: ``(number, wire_type, value)``, in order."""
    view = _view(buf)
    for number, wire_type, value, start, stop in _walk(view):
        yield number, wire_type, value if wire_type == VARINT else view[start:stop]


def field_slices(buf, number: int) -> list[memoryview]:
    """Payloads of the length-delimited field ``number`` at the top level of message ``buf``."""
    return [value for n, wire_type, value in fields(buf) if n == number and wire_type == LEN]
