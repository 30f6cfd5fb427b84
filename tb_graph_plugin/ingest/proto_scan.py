"""The bytes of one field of a serialized protobuf message, found without parsing the message.

A trace's RunMetadata holds each function graph up to four times (partition graphs, the graph
before and after optimization, and the top-level partition graphs): 82 MB for a 141k-op
training step, of which only ``function_graphs[0].pre_optimization_graph`` (21 MB) is shown.
Walking the top-level fields of the encoding (protobuf encoding guide [PROTO-ENC] in
``docs/references.md``: a key varint ``field_number << 3 | wire_type``, then a varint, 8 or 4
bytes, or a length varint and that many bytes) finds that sub-message's bytes in microseconds;
they are already a serialized GraphDef, handed to a worker as they are.

Pre-condition: ``buf`` is bytes-like. Post-condition: ``field_slices`` returns the payloads of
every occurrence of the field, in order, as zero-copy memoryviews, or raises ``ValueError``
when the bytes are not a well-formed message at the top level (callers then parse normally and
report the protobuf library's own error).
"""

from __future__ import annotations

__all__ = ["field_slices"]

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


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


def field_slices(buf, number: int) -> list[memoryview]:
    """Payloads of the length-delimited field ``number`` at the top level of message ``buf``."""
    view = memoryview(buf).cast("B") if not isinstance(buf, memoryview) else buf
    found: list[memoryview] = []
    pos, end = 0, len(view)
    while pos < end:
        key, pos = _varint(view, pos)
        wire_type, field = key & 7, key >> 3
        if field == 0:
            raise ValueError("field number 0")
        if wire_type == _VARINT:
            _, pos = _varint(view, pos)
        elif wire_type == _I64:
            pos += 8
        elif wire_type == _I32:
            pos += 4
        elif wire_type == _LEN:
            size, pos = _varint(view, pos)
            if field == number:
                found.append(view[pos:pos + size])
            pos += size
        else:  # groups (3, 4) are not used by these messages
            raise ValueError(f"unsupported wire type {wire_type}")
        if pos > end:
            raise ValueError("field runs past the end of the message")
    return found
