"""``ingest.crc32c`` against oracles that share no code with it.

* the CRC-32C test vectors of RFC 3720 (iSCSI) appendix B.4 and the catalogue check value
  ``crc32c(b"123456789") == 0xE3069283``, masked by hand-written constants below;
* the checksums that TensorFlow's own C++ record writer (``tf.io.TFRecordWriter``) stored in a
  TFRecord file with records of every length class, written in a subprocess;
* the checksums in the committed demo logs (TensorFlow's and PyTorch's event writers).
"""

from __future__ import annotations

import os
import random
import struct
import subprocess
import sys
from pathlib import Path

import google_crc32c
import numpy as np
import pytest

from tb_graph_plugin.ingest.crc32c import masked_crc32c, masked_crc32c_rows

REPO = Path(__file__).resolve().parents[2]
# Record lengths around TFRecord's and the CRC's interesting sizes, up to 3 MB.
TF_RECORD_LENGTHS = [0, 1, 7, 8, 9, 63, 64, 65, 1000, 4096, 65_537, 3_000_001]

# RFC 3720 B.4: (data, CRC-32C). The RFC prints the CRC bytes as sent (little-endian).
RFC3720_VECTORS = [
    (bytes(32), 0x8A9136AA),
    (b"\xff" * 32, 0x62A8AB43),
    (bytes(range(32)), 0x46DD794E),
    (bytes(range(31, -1, -1)), 0x113FDB5C),
    (b"123456789", 0xE3069283),  # the CRC-32C check value
]


def test_the_c_extension_is_in_use():
    """The pure-Python fallback is ~2000x slower: an upload of 50 MB would take 10 s to check."""
    assert google_crc32c.implementation == "c"


@pytest.mark.parametrize("data,crc", RFC3720_VECTORS)
def test_rfc3720_vectors(data, crc):
    assert google_crc32c.value(data) == crc
    rotated = ((crc >> 15) | (crc << 17)) & 0xFFFFFFFF
    assert masked_crc32c(data) == (rotated + 0xA282EAD8) & 0xFFFFFFFF


def test_masked_check_value():
    assert masked_crc32c(b"123456789") == 0xC78AB0E5  # 0xE3069283 rotated right 15, + 0xa282ead8


def test_accepts_memoryview_and_bytearray():
    data = random.Random(3).randbytes(40_000)
    assert masked_crc32c(memoryview(data)) == masked_crc32c(bytearray(data)) == masked_crc32c(data)


def test_memoryview_over_several_chunks_equals_bytes():
    """A view is checked 1 MiB at a time: a slice starting mid-buffer, across chunk boundaries
    and ending mid-chunk has the CRC of its bytes."""
    data = random.Random(4).randbytes(3 * (1 << 20) + 1000)
    view = memoryview(data)[7:7 + 2 * (1 << 20) + 333]
    assert masked_crc32c(view) == masked_crc32c(bytes(view))
    assert masked_crc32c(memoryview(b"")) == masked_crc32c(b"")


def _write_tf_records(path: Path) -> None:
    script = (
        "import random, sys\n"
        "import tensorflow as tf\n"
        "with tf.io.TFRecordWriter(sys.argv[1]) as w:\n"
        f"    for n in {TF_RECORD_LENGTHS!r}:\n"
        "        w.write(random.Random(n).randbytes(n))\n"
    )
    subprocess.run([sys.executable, "-c", script, str(path)], check=True, capture_output=True,
                   timeout=300, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))


def _frames(blob: bytes):
    """(header bytes, stored header crc, data, stored data crc) of each TFRecord frame."""
    offset = 0
    while offset < len(blob):
        (length,) = struct.unpack_from("<Q", blob, offset)
        header_crc, = struct.unpack_from("<I", blob, offset + 8)
        data = blob[offset + 12:offset + 12 + length]
        data_crc, = struct.unpack_from("<I", blob, offset + 12 + length)
        yield blob[offset:offset + 8], header_crc, data, data_crc
        offset += 16 + length


@pytest.fixture(scope="module")
def tf_records(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("tfrecord") / "records.tfrecord"
    _write_tf_records(path)
    return path.read_bytes()


def test_equals_tensorflow_record_writer(tf_records):
    frames = list(_frames(tf_records))
    assert [len(data) for _, _, data, _ in frames] == TF_RECORD_LENGTHS
    for header, header_crc, data, data_crc in frames:
        assert masked_crc32c(header) == header_crc
        assert masked_crc32c(data) == data_crc


def _demo_event_files() -> list[Path]:
    return sorted((REPO / "demo_logs").rglob("events.out.tfevents.*"))


def test_equals_the_demo_logs_writers():
    files = _demo_event_files()
    assert len(files) >= 6
    for path in files:
        frames = list(_frames(path.read_bytes()))
        assert frames, path
        for header, header_crc, data, data_crc in frames:
            assert masked_crc32c(header) == header_crc, path
            assert masked_crc32c(data) == data_crc, path


def test_rows_equal_one_at_a_time(tf_records):
    """Real headers (the writer's checksums) and random rows, including all-zero and all-0xff."""
    headers = [header for header, _, _, _ in _frames(tf_records)]
    stored = [crc for _, crc, _, _ in _frames(tf_records)]
    noise = random.Random(8).randbytes(8 * 500)
    rows = b"".join(headers) + noise + bytes(8) + b"\xff" * 8
    array = np.frombuffer(rows, dtype=np.uint8).reshape(-1, 8)
    got = masked_crc32c_rows(array)
    assert got.dtype == np.uint32
    assert got[:len(headers)].tolist() == stored
    assert got.tolist() == [masked_crc32c(array[i].tobytes()) for i in range(len(array))]
