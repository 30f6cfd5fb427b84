"""``tb-graph summary`` on real logs and on a .pbtxt written by tf.io.write_graph."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tb_graph_plugin.cli import main

REPO = Path(__file__).resolve().parent.parent


def _summary(capsys, *argv):
    assert main(["summary", *argv, "--compact"]) == 0
    return json.loads(capsys.readouterr().out)


def test_summary_on_torch_transformer_logdir(real_logs, capsys):
    out = _summary(capsys, str(real_logs.get("torch_transformer")))
    assert out["ops"] > 500 and out["main_ops"] < out["ops"]
    assert {t["name"] for t in out["top_level"]} == {"input", "output", "TransformerEncoder"}
    for t in out["top_level"]:
        assert t["kind"] in ("op", "meta", "series") and t["cardinality"] >= 1
    blocks = [s for s in out["series"] if s["kind"] == "block"]
    assert len(blocks) == 1 and len(blocks[0]["members"]) == 6
    assert any(members == blocks[0]["members"] for members in out["templates"].values())


def test_summary_on_resnet50_shows_inferred_stages(real_logs, capsys):
    out = _summary(capsys, str(real_logs.get("keras_resnet50_trace")))
    assert "resnet50_1/conv3" in out["inferred_groups"]
    model = [t for t in out["top_level"] if t["name"] == "resnet50_1"]
    assert model and model[0]["kind"] == "meta"
    off = _summary(capsys, str(real_logs.get("keras_resnet50_trace")), "--infer-scopes", "off")
    assert off["inferred_groups"] == []


def test_summary_on_pbtxt_via_console_entry(tmp_path):
    script = (
        "import tensorflow as tf\n"
        "@tf.function\n"
        "def f(x):\n"
        "    with tf.name_scope('block'):\n"
        "        return tf.nn.relu(tf.matmul(x, tf.ones((3, 3))))\n"
        f"tf.io.write_graph(f.get_concrete_function(tf.TensorSpec((2, 3))).graph, r'{tmp_path}', 'g.pbtxt')\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, timeout=300)
    proc = subprocess.run([sys.executable, "-m", "tb_graph_plugin.cli", "summary",
                           str(tmp_path / "g.pbtxt")], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["ops"] >= 4
    (block,) = [t for t in out["top_level"] if t["name"] == "block"]
    assert block["kind"] == "meta" and block["cardinality"] >= 2  # MatMul, Relu (ones: embedded)


def test_summary_on_a_damaged_event_file_keeps_the_graph_after_the_damage(real_logs, capsys, tmp_path):
    """TensorBoard's reader stops at a corrupt record; ``tb-graph`` reads past it and says so."""
    from tb_graph_plugin.ingest import event_file

    (src,) = list((real_logs.get("tf1_graph") / "tf1_graph").glob("events.out.tfevents.*"))
    data = bytearray(src.read_bytes())
    records, _ = event_file.read_records(bytes(data))
    graph0_offset = records[1][0]  # file_version, then the step-0 graph
    data[graph0_offset + 12 + 10] ^= 0xFF
    damaged = tmp_path / src.name
    damaged.write_bytes(bytes(data))
    assert main(["summary", str(damaged), "--compact"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert "eval" in {t["name"] for t in out["top_level"]}  # the step-5 graph, written after the damage
    assert f"warning: {damaged}: corrupt record at byte {graph0_offset} (" in captured.err
    assert f"showing the run graph (step 5) of {damaged}" in captured.err
    # An intact file still goes through TensorBoard's own reader, silently.
    assert main(["summary", str(src), "--compact"]) == 0
    assert capsys.readouterr().err == ""


def test_summary_tree_nests_every_group_with_kind_series_and_inference(real_logs, capsys):
    out = _summary(capsys, str(real_logs.get("keras_bert_encoder_trace")), "--tree")
    tree = out["tree"]
    assert tree["name"] == "__root__" and tree["cardinality"] == out["main_ops"]

    def walk(node):
        yield node
        for child in node["children"]:
            yield from walk(child)

    groups = list(walk(tree))
    assert len(groups) == out["groups"] + 1  # every group once, and the root
    (layers,) = [g for g in groups if g["series"] and g["series"]["kind"] == "block"]
    assert layers["label"] == "layer_[0-11]" and layers["series"]["members"] == 12
    assert [c["label"] for c in layers["children"]] == [f"layer_{i}" for i in range(12)]
    assert {c["inferred"] for c in layers["children"]} == {"name"}
    assert len({c["template"] for c in layers["children"]}) == 1
    assert all(g["cardinality"] >= g["ops"] for g in groups)
    without = _summary(capsys, str(real_logs.get("keras_bert_encoder_trace")))
    assert "tree" not in without


def _groups(tree: dict) -> list[str]:
    found = []
    for child in tree.get("children", []):
        found.append(child["name"])
        found.extend(_groups(child))
    return found


def test_summary_on_onnx_files_imports_neither_torch_nor_onnx(onnx_files):
    """``tb-graph summary x.onnx`` as a program: the module calls of torch.onnx.export's file
    are groups, and the process imported no torch, onnx or TensorFlow (``-X importtime``)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "tb_graph_plugin.cli", "summary",
                           str(onnx_files / "cnn.onnx"), "--tree", "--compact"], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
                if line.startswith("import time:") and "|" in line}
    assert not {m for m in imported if m.split(".")[0] in ("torch", "onnx", "onnxscript", "tensorflow")}
    out = json.loads(proc.stdout)
    assert {t["name"] for t in out["top_level"]} == {"input", "TinyResNet", "output"}
    groups = _groups(out["tree"])
    assert {"TinyResNet/BasicBlock[mix]", "TinyResNet/BasicBlock[mix@1]",
            "TinyResNet/Sequential[layer1]/BasicBlock[1]/ReLU[relu@1]"} <= set(groups)


def test_summary_and_diff_on_legacy_onnx(onnx_files, capsys):
    out = _summary(capsys, str(onnx_files / "bert_legacy.onnx"), "--tree")
    assert {"bert/encoder/0", "bert/encoder/1"} <= set(_groups(out["tree"]))
    legacy, new = str(onnx_files / "cnn_legacy.onnx"), str(onnx_files / "cnn.onnx")
    assert main(["diff", new, new]) == 0
    assert main(["diff", legacy, new]) == 1
    capsys.readouterr()
