"""Uploading a damaged event file keeps every intact record and says what was skipped.

TensorBoard's own readers stop at an event file's first corrupt record (see
``test_bad_inputs.test_broken_event_files_keep_the_records_before_the_damage``). An uploaded event
file is read by ``ingest.event_file`` instead: the copies of a real TF1 ``FileWriter`` log in
``broken_logdir`` (records: file_version, graph step 0, meta graph, run metadata ``step1``,
summaries, graph step 5) must open on their newest intact graph, with a warning per damage.
"""

from __future__ import annotations

import json
import struct

import pytest

from tb_graph_plugin.ingest import event_file
from tests.tb_app import OURS


@pytest.fixture(scope="module")
def app(app_factory, broken_logdir):
    return app_factory(broken_logdir / "good")


def _event_bytes(broken_logdir, run: str) -> bytes:
    (path,) = list((broken_logdir / run).glob("events.out.tfevents.*"))
    return path.read_bytes()


def _upload(app, blob: bytes, filename: str) -> dict:
    response = app.post(OURS + "/upload", blob, filename=filename)
    assert response.status_code == 200, response.get_data(as_text=True)
    return json.loads(response.get_data())


def _search(app, answer: dict, q: str) -> list[str]:
    ref = answer["graph"]
    response = app.get(OURS + "/search", run=ref["run"], tag=ref["tag"], q=q, wait="30")
    assert response.status_code == 200, response.get_data(as_text=True)
    return [h["name"] for h in json.loads(response.get_data())["hits"]]


def test_intact_event_file_opens_its_latest_run_graph(app, broken_logdir):
    answer = _upload(app, _event_bytes(broken_logdir, "good"), "events.out.tfevents.1.good")
    assert answer["source"] == "run graph (step 5)"
    assert answer["warnings"] == []
    assert _search(app, answer, "^eval/features$") == ["eval/features"]  # only in the step 5 graph


def _frames(broken_logdir) -> list[tuple[int, int]]:
    """``(offset, data length)`` of each TFRecord frame of the intact file, read with ``struct``
    (u64 length, u32 crc, data, u32 crc): where ``broken_logdir`` put its damage. Record 1 is the
    step 0 graph, 3 the run metadata ``step1``, 5 the step 5 graph."""
    data = _event_bytes(broken_logdir, "good")
    frames, off = [], 0
    while off < len(data):
        (length,) = struct.unpack_from("<Q", data, off)
        frames.append((off, length))
        off += 8 + 4 + length + 4
    assert off == len(data) and len(frames) == 6
    return frames


def test_records_after_a_corrupt_one_are_kept(app, broken_logdir):
    """TensorBoard loses the step 5 graph behind the corrupt profile record; the upload keeps it."""
    frames = _frames(broken_logdir)
    rm, rm_length = frames[3]  # the fixture flipped a data byte of this record
    blob = _event_bytes(broken_logdir, "crc_run_metadata")
    answer = _upload(app, blob, "events.out.tfevents.1.crc")
    assert answer["source"] == "run graph (step 5)"
    assert answer["warnings"] == [f"corrupt record at byte {rm} ({rm_length} bytes, data checksum mismatch) was skipped"]
    records, _ = event_file.read_records(blob)
    assert [o for o, _ in records] == [o for i, (o, _) in enumerate(frames) if i != 3]
    assert _search(app, answer, "^eval/features$") == ["eval/features"]


def test_corrupt_length_field_skips_to_the_next_valid_header(app, broken_logdir):
    frames = _frames(broken_logdir)
    rm, next_record = frames[3][0], frames[4][0]  # the fixture flipped a byte of record 3's length
    answer = _upload(app, _event_bytes(broken_logdir, "bad_length"), "events.out.tfevents.1.len")
    assert answer["source"] == "run graph (step 5)"
    assert answer["warnings"] == [f"corrupt record header at byte {rm} (length checksum mismatch): "
                                  f"bytes {rm}..{next_record} were skipped"]


def test_truncated_last_record_is_reported(app, broken_logdir):
    graph5, length = _frames(broken_logdir)[5]  # the fixture kept its header and 500 data bytes
    answer = _upload(app, _event_bytes(broken_logdir, "truncated"), "events.out.tfevents.1.cut")
    assert answer["source"] == "run graph (step 0)"
    assert answer["warnings"] == [f"truncated record at byte {graph5}: it declares {length} bytes but the file "
                                  "ends after 500; the record was skipped"]


def test_first_graph_corrupt_opens_the_later_one(app, broken_logdir):
    graph0, length = _frames(broken_logdir)[1]  # the fixture flipped a data byte of the step 0 graph
    answer = _upload(app, _event_bytes(broken_logdir, "crc_graph"), "events.out.tfevents.1.g")
    assert answer["source"] == "run graph (step 5)"
    assert answer["warnings"] == [f"corrupt record at byte {graph0} ({length} bytes, data checksum mismatch) was skipped"]


def test_event_file_without_a_graph_says_what_it_holds(app, broken_logdir):
    blob = _event_bytes(broken_logdir, "good")
    records, _ = event_file.read_records(blob)
    first = records[0][0] + 16 + len(records[0][1])  # only the file_version record
    response = app.post(OURS + "/upload", blob[:first], filename="events.out.tfevents.1.v")
    assert response.status_code == 400
    assert json.loads(response.get_data())["error"] == (
        "Invalid argument: uploaded event file 'events.out.tfevents.1.v' holds no graph (1 intact "
        "records, none with a run graph, a trace_export graph or a Keras model)"
    )


def test_garbage_named_like_an_event_file_is_400(app, broken_logdir):
    blob = _event_bytes(broken_logdir, "garbage")
    response = app.post(OURS + "/upload", blob, filename="events.out.tfevents.1.garbage")
    assert response.status_code == 400
    message = json.loads(response.get_data())["error"]
    assert message.startswith(
        "Invalid argument: uploaded event file 'events.out.tfevents.1.garbage' holds no graph (0 intact records"
    ), message
    assert "corrupt record header at byte 0 (length checksum mismatch)" in message


def test_event_file_is_recognised_without_its_name(app, broken_logdir):
    answer = _upload(app, _event_bytes(broken_logdir, "good"), "renamed.bin")
    assert answer["source"] == "run graph (step 5)"


def test_trace_export_event_file(app, real_logs):
    """A TF2 trace_export log: the merged function graphs open, as /graph serves them."""
    root = real_logs.get("tf2_multi_function_trace")
    (path,) = list(root.rglob("events.out.tfevents.*"))
    answer = _upload(app, path.read_bytes(), path.name)
    assert answer["source"].startswith("trace ")
    assert answer["ops"] > 0 and answer["warnings"] == []


def test_keras_callback_event_file_opens_the_conceptual_graph(app, real_logs):
    root = real_logs.get("keras_callback")
    paths = [p for p in root.rglob("events.out.tfevents.*") if "train" in str(p)]
    answers = [_upload(app, p.read_bytes(), p.name) for p in paths if _has_graph(p.read_bytes())]
    assert answers, "the Keras callback wrote no event file with a graph"
    assert answers[0]["source"].startswith("Keras model ")


def _has_graph(blob: bytes) -> bool:
    try:
        event_file.graph_from_event_file(blob, "x")
    except Exception:  # noqa: BLE001 - the callback also writes event files without graphs
        return False
    return True


# ------------------------------------------------------------------------------ op limit


@pytest.fixture(scope="module")
def small_app(app_factory, broken_logdir):
    return app_factory(broken_logdir, max_ops=5)


def test_graph_over_the_op_limit_is_413_with_its_op_count(small_app):
    response = small_app.get(OURS + "/scene", run="good", wait="30")
    assert response.status_code == 413
    message = json.loads(response.get_data())["error"]
    ops = int(message.split(" has ")[1].split(" ops")[0].replace(",", ""))
    assert ops == 9  # the step 5 graph
    assert message == (
        f"graph op of run 'good' tag '__run_graph__' has {ops:,} ops, more than this server's limit "
        "of 5; to open it, restart TensorBoard with --graph_explorer_max_ops=9 (the stock-compatible "
        "/graph route still serves its GraphDef)"
    )
    assert small_app.get(OURS + "/graph", run="good").status_code == 200


def test_upload_over_the_op_limit_is_413(small_app):
    nodes = "".join(f'node {{ name: "n{i}" op: "NoOp" }}\n' for i in range(6))
    response = small_app.post(OURS + "/upload", nodes.encode(), filename="g.pbtxt")
    assert response.status_code == 413
    assert json.loads(response.get_data())["error"] == (
        "uploaded file 'g.pbtxt' has 6 ops, more than this server's limit of 5; to open it, restart "
        "TensorBoard with --graph_explorer_max_ops=6 (the stock-compatible /graph route still serves "
        "its GraphDef)"
    )
