"""CRC-32C (Castagnoli) and TFRecord's masked CRC, fast enough for 100 MB graph records.

TFRecord framing (``tensorflow/core/lib/io/record_writer.cc``; TensorBoard's
``tensorboard/summary/writer/record_writer.py``) protects every record's length and data with
``masked_crc32c``. TensorBoard ships a pure-Python CRC (about 0.1 s per MB here); this module
computes the same value with numpy by splitting the bytes into many equal chunks, running the
table-driven CRC over all chunks at once (one numpy step per byte column), then joining the chunk
CRCs with the linear "shift by L zero bytes" operator (the idea of zlib's ``crc32_combine``).

Pre-condition: ``data`` is any bytes-like object.
Post-condition: ``crc32c(data)`` equals the standard CRC-32C (``crc32c(b"123456789") ==
0xE3069283``) and ``masked_crc32c`` equals TensorBoard's ``masked_crc32c``.

Example::

    >>> hex(crc32c(b"123456789"))
    '0xe3069283'
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["crc32c", "masked_crc32c"]

_POLY = 0x82F63B78  # reflected Castagnoli polynomial
_MASK_DELTA = 0xA282EAD8
_VECTOR_MIN_BYTES = 1 << 14  # below this the scalar loop is as fast


def _make_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ (_POLY if crc & 1 else 0)
        table.append(crc)
    return table


_TABLE = _make_table()
_TABLE_NP = np.array(_TABLE, dtype=np.uint32)


def _raw_scalar(register: int, data) -> int:
    """The CRC register after feeding ``data`` (no initial or final inversion)."""
    table = _TABLE
    for byte in data:
        register = table[(register ^ byte) & 0xFF] ^ (register >> 8)
    return register


def _raw_chunks(data: np.ndarray, n_chunks: int) -> np.ndarray:
    """Registers (from 0) of ``n_chunks`` equal consecutive chunks of ``data``, computed together."""
    columns = data.reshape(n_chunks, -1).T.copy()  # row j = byte j of every chunk
    registers = np.zeros(n_chunks, dtype=np.uint32)
    table = _TABLE_NP
    for row in columns:
        registers = table[(registers ^ row) & 0xFF] ^ (registers >> 8)
    return registers


@functools.lru_cache(maxsize=64)
def _shift_tables(n_bytes: int) -> tuple[tuple[int, ...], ...]:
    """4 lookup tables applying "feed n_bytes zero bytes" to a register, one per register byte.

    Feeding zeros is linear over GF(2) in the register, so the image of a register is the XOR of
    the images of its four bytes.
    """

    def shift(register: int) -> int:
        return _shift_by_squaring(register, n_bytes)

    return tuple(tuple(shift(b << (8 * k)) for b in range(256)) for k in range(4))


def _zero_byte_matrix() -> list[int]:
    """Columns of the GF(2) matrix that feeds one zero byte: image of each register bit."""
    return [_raw_scalar(1 << bit, b"\0") for bit in range(32)]


def _apply(matrix: list[int], register: int) -> int:
    out = 0
    bit = 0
    while register:
        if register & 1:
            out ^= matrix[bit]
        register >>= 1
        bit += 1
    return out


def _square(matrix: list[int]) -> list[int]:
    return [_apply(matrix, column) for column in matrix]


def _shift_by_squaring(register: int, n_bytes: int) -> int:
    matrix = _zero_byte_matrix()
    while n_bytes:
        if n_bytes & 1:
            register = _apply(matrix, register)
        n_bytes >>= 1
        if n_bytes:
            matrix = _square(matrix)
    return register


def _shift(register: int, n_bytes: int) -> int:
    t0, t1, t2, t3 = _shift_tables(n_bytes)
    return t0[register & 0xFF] ^ t1[(register >> 8) & 0xFF] ^ t2[(register >> 16) & 0xFF] ^ t3[register >> 24]


def crc32c(data) -> int:
    """CRC-32C of ``data``."""
    view = memoryview(data).cast("B")
    n = len(view)
    if n < _VECTOR_MIN_BYTES:
        return _raw_scalar(0xFFFFFFFF, view) ^ 0xFFFFFFFF
    n_chunks = 1 << max(6, min(13, (n.bit_length() + 1) // 2))
    chunk = n // n_chunks
    head = n - chunk * n_chunks  # a short first piece keeps every chunk the same length
    register = _raw_scalar(0xFFFFFFFF, view[:head])
    body = np.frombuffer(view[head:], dtype=np.uint8)
    for raw in _raw_chunks(body, n_chunks).tolist():
        register = _shift(register, chunk) ^ raw
    return register ^ 0xFFFFFFFF


def masked_crc32c(data) -> int:
    """TFRecord's masked CRC: rotate right by 15 bits and add a constant."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF
