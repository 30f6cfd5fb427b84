"""TFRecord's masked CRC-32C, computed by the ``google-crc32c`` package.

TFRecord framing ([TFRECORD] in ``docs/references.md``:
``tensorflow/core/lib/io/record_writer.cc``; TensorBoard's
``tensorboard/summary/writer/record_writer.py``) protects every record's length and data with
``masked_crc32c``: the CRC-32C ([CRC32C]: Castagnoli, RFC 3720 appendix B.4) rotated right by 15
bits plus ``0xa282ead8``. The CRC itself is ``google_crc32c.value`` (a C extension, about 10 ms per 100 MB
here). That function takes only ``bytes``: a record inside an upload is a ``memoryview`` of it,
whose CRC is extended chunk by chunk (``google_crc32c.extend``, 1 MiB copied at a time into a
cache-warm buffer) rather than copied whole (a fresh 50 MB ``bytes`` costs 40-100 ms here, mostly
page faults). When that package cannot load its C extension it falls back to pure Python with a
``RuntimeWarning`` at import (``google_crc32c.implementation == "python"``): results stay the
same, but checking an upload then costs about 0.2 s per MB instead of 0.1 ms.

``masked_crc32c_rows`` checks many 8-byte record headers at once, for the scan that finds the
next valid header after a damaged stretch: over a fixed length the CRC is affine over GF(2)
(``crc(a ^ b) == crc(a) ^ crc(b) ^ crc(0)``), so the CRC of a row is ``crc(0)`` XOR one table
entry per byte position, the tables built from ``google_crc32c.value`` itself.

Pre-condition: ``data`` is a bytes-like object; ``rows`` a ``(k, 8)`` uint8 array.
Post-condition: ``masked_crc32c`` equals TensorFlow's ``masked_crc32c``; row ``i`` of
``masked_crc32c_rows(rows)`` equals ``masked_crc32c(rows[i].tobytes())``.

Example::

    >>> hex(masked_crc32c(b"123456789"))  # the CRC-32C check value 0xe3069283, masked
    '0xc78ab0e5'
"""

from __future__ import annotations

import google_crc32c
import numpy as np

__all__ = ["masked_crc32c", "masked_crc32c_rows"]

_MASK_DELTA = 0xA282EAD8
_CHUNK = 1 << 20  # bytes of a memoryview copied per ``google_crc32c.extend`` call


def _mask(crc):
    """Rotate right by 15 bits and add ``0xa282ead8`` (mod 2**32); ints or uint32 arrays."""
    if isinstance(crc, np.ndarray):
        return ((crc >> np.uint32(15)) | (crc << np.uint32(17))) + np.uint32(_MASK_DELTA)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF


def masked_crc32c(data) -> int:
    """TFRecord's masked CRC-32C of ``data`` (bytes, or any C-contiguous buffer, never copied whole)."""
    if isinstance(data, bytes):
        return _mask(google_crc32c.value(data))
    # The C extension takes only ``bytes`` (not memoryview or bytearray): a small buffer is
    # copied, a large one extended chunk by chunk.
    view = memoryview(data)
    if view.nbytes <= _CHUNK:
        return _mask(google_crc32c.value(bytes(view)))
    view = view.cast("B")
    crc = 0
    for start in range(0, len(view), _CHUNK):
        crc = google_crc32c.extend(crc, bytes(view[start:start + _CHUNK]))
    return _mask(crc)


def _row_tables(width: int) -> tuple[int, np.ndarray]:
    """``crc(width zero bytes)`` and, per byte position k and value b, ``crc(b at k) ^ crc(0)``."""
    zero = google_crc32c.value(bytes(width))
    tables = np.zeros((width, 256), dtype=np.uint32)
    for k in range(width):
        for b in range(256):
            row = bytearray(width)
            row[k] = b
            tables[k, b] = google_crc32c.value(bytes(row)) ^ zero
    return zero, tables


_ZERO_8, _TABLES_8 = _row_tables(8)


def masked_crc32c_rows(rows: np.ndarray) -> np.ndarray:
    """``masked_crc32c`` of each 8-byte row of ``rows``, all rows at once (uint32 array)."""
    crc = np.full(len(rows), _ZERO_8, dtype=np.uint32)
    for k in range(8):
        crc ^= _TABLES_8[k][rows[:, k]]
    return _mask(crc)
