"""``ingest.crc32c`` equals TensorBoard's pure-Python masked CRC on every length class."""

from __future__ import annotations

import random

import pytest
from tensorboard.compat.tensorflow_stub import pywrap_tensorflow

from tb_graph_plugin.ingest.crc32c import crc32c, masked_crc32c


def test_check_value():
    assert crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
    assert crc32c(b"") == 0


# Scalar path, the vectorized path's boundary, uneven head pieces, several chunk counts.
@pytest.mark.parametrize("n", [1, 8, 1000, (1 << 14) - 1, 1 << 14, (1 << 14) + 1, 99_991, 1 << 20, 2_500_003])
def test_equals_tensorboard_masked_crc(n):
    data = random.Random(n).randbytes(n)
    assert masked_crc32c(data) == pywrap_tensorflow.masked_crc32c(data)


def test_accepts_memoryview_and_bytearray():
    data = random.Random(3).randbytes(40_000)
    assert crc32c(memoryview(data)) == crc32c(bytearray(data)) == crc32c(data)
