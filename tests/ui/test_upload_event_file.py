"""End to end: uploading an event file shows what the server skipped and what it opened.

The event file is a real one written by TF (``real_logs.get("tf1_graph")``: records file_version,
graph step 0, meta graph, tagged run metadata, summaries, graph step 5) with one data byte of the
last graph record flipped. The server skips that record (data checksum mismatch), opens the run
graph of step 0 instead, and says both in its ``UploadAnswer``; the app shows them, as text, in the
warning line while that upload is the graph on screen. The file name carries an HTML payload: it
must be shown literally and never run. Screenshot: tests/_artifacts/screenshots/.
"""

from __future__ import annotations

import struct

import pytest

from tests.ui.conftest import SHOTS, wait_settled
from tests.ui.test_explorer_loading_and_toggles import upload
from tests.ui.test_graph_explorer_ui import canvas_ink, ds, open_graph

pytestmark = pytest.mark.slow

PAYLOAD_NAME = "events.out.tfevents.1700000000.<img src=x onerror=window.__gxXss=1>"


def record_frames(data: bytes) -> list[tuple[int, int]]:
    """(offset, data length) of each TFRecord frame: u64 length, u32 crc, data, u32 crc."""
    frames, off = [], 0
    while off + 12 <= len(data):
        (n,) = struct.unpack("<Q", data[off:off + 8])
        frames.append((off, n))
        off += 12 + n + 4
    assert off == len(data), "the real event file does not end on a record boundary"
    return frames


def test_upload_event_file_with_a_corrupt_record(page, explorer, real_logs, tmp_path):
    (event_file,) = (real_logs.get("tf1_graph") / "tf1_graph").glob("events.out.tfevents.*")
    data = bytearray(event_file.read_bytes())
    frames = record_frames(bytes(data))
    assert len(frames) == 6
    graph5_at, graph5_len = frames[5]
    assert graph5_len > 200
    data[graph5_at + 12 + 100] ^= 0xFF  # a data byte of the step-5 graph: its data CRC fails
    path = tmp_path / PAYLOAD_NAME
    path.write_bytes(bytes(data))

    frame = explorer
    upload(frame, path)
    assert ds(frame, "error") == ""
    assert canvas_ink(frame) > 20
    assert int(ds(frame, "sceneNodes")) > 0

    expected = f"corrupt record at byte {graph5_at} ({graph5_len} bytes, data checksum mismatch) was skipped"
    assert ds(frame, "uploadWarningCount") == "1"
    assert frame.inner_text("[data-upload-warning]") == expected
    assert ds(frame, "uploadSource") == "run graph (step 0)"  # step 5 was the damaged one
    source = frame.inner_text("[data-upload-info]")
    assert source == f"uploaded {PAYLOAD_NAME}: run graph (step 0)"
    assert frame.is_visible("[data-warnings]")
    line = frame.inner_text("[data-warnings]")
    assert expected in line and "run graph (step 0)" in line
    # text only: the file name's markup is shown, not parsed, and nothing ran
    assert frame.evaluate("document.querySelectorAll('img').length") == 0
    assert frame.eval_on_selector("div[data-warnings]", "e => e.querySelectorAll('*:not(span)').length") == 0
    assert frame.evaluate("window.__gxXss === undefined")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "test_upload_event_file_warning_line.png"))

    # the note belongs to the upload: another graph does not show it ...
    open_graph(frame, "tf1_graph")
    assert frame.query_selector("[data-upload-warning]") is None
    assert frame.query_selector("[data-upload-info]") is None
    assert ds(frame, "uploadSource") == ""
    assert expected not in frame.inner_text("[data-warnings]")
    # ... and picking the upload again brings it back
    frame.select_option("[data-picker=run]", "__upload__")
    assert wait_settled(frame) == "ready"
    assert frame.inner_text("[data-upload-warning]") == expected
    assert ds(frame, "uploadSource") == "run graph (step 0)"
    assert page.errors == []
