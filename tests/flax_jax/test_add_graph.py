"""``tb_graph_plugin.jax.add_graph`` on real Flax models (issue 42), read back through TensorBoard.

Logs are written by ``tests/flax_jax/jax_logs.py`` with the real jax / Flax / optax APIs in a
process of its own; ``facts.json`` holds what jax itself says about each program (every
equation's full name stack), which the graphs are checked against: every block is one group
holding all its ops, a scan body is one group labelled with its length, the backward and the
optimizer stand apart, and no edge is drawn reversed with every group open.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import build_hierarchy
from tb_graph_plugin.ingest.local import load_graph_def_from_path
from tb_graph_plugin.layout.scene import LayoutCache, build_scene
from tb_graph_plugin import wire
from tests.hierarchy.invariants import check_invariants
from tests.tb_app import OURS, STOCK, TbApp

REPO = Path(__file__).resolve().parents[2]
IO = ("params/", "input/", "output/")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("jax_logs")
    env = dict(os.environ, PYTHONPATH=str(REPO), JAX_PLATFORMS="cpu")
    subprocess.run([sys.executable, "-m", "tests.flax_jax.jax_logs", str(out)], cwd=REPO, env=env, check=True,
                   timeout=600)
    return out


@pytest.fixture(scope="module")
def facts(logs) -> dict:
    return json.loads((logs / "facts.json").read_text())


_GRAPHS: dict = {}


def graph(logs, run):
    if (logs, run) not in _GRAPHS:
        g = load_graph_def_from_path(str(logs / run))
        h = build_hierarchy(build_slim_graph(g))
        _GRAPHS[(logs, run)] = (g, h)
    return _GRAPHS[(logs, run)]


def under(g, prefix: str) -> list:
    return [n for n in g.node if n.name.startswith(prefix + "/")]


def stacks_under(facts, run, prefix: str) -> int:
    return sum(1 for s in facts[run]["stacks"] if s == prefix or s.startswith(prefix + "/"))


def group(h, name):
    gid = h.group_index.get(name)
    assert gid is not None, (name, sorted(n for n in h.group_index if n.count("/") <= name.count("/"))[:40])
    return h.group(gid)


def test_linen_blocks_hold_every_op_of_their_name_stack(logs, facts):
    g, h = graph(logs, "linen")
    check_invariants(h)
    for i in range(3):
        scope = f"Transformer/block_{i}"
        ops = under(g, scope)
        assert len(ops) == stacks_under(facts, "linen", scope) > 40
        assert group(h, scope).cardinality == len(ops)
        assert group(h, f"{scope}/SelfAttention_0").cardinality > 10
    ops = [n for n in g.node if not n.name.startswith(IO)]
    assert len(ops) == len(facts["linen"]["stacks"])
    assert all(n.name.startswith("Transformer/") for n in ops)
    dots = [n for n in under(g, "Transformer/block_0") if n.op == "jax::dot_general"]
    assert dots and all("dimension_numbers" in n.attr and n.attr["_output_shapes"].list.shape for n in dots)
    # the user frame (the model's line, not flax's or jax's) and its text
    assert all(n.attr["_source"].s.decode().split("/")[-1].startswith("models.py:") for n in dots)
    assert {n.attr["_source_line"].s.decode() for n in dots} >= {"h = nn.SelfAttention(num_heads=2)(h)"}
    kernel = next(n for n in g.node if n.name == "params/block_0/Dense_0/kernel")
    assert kernel.op == "jax::parameter" and [d.size for d in kernel.attr["_output_shapes"].list.shape[0].dim] == [32, 64]
    assert kernel.attr["dtype"].type == 1  # DT_FLOAT


def test_linen_scan_body_is_one_group_labelled_with_its_length(logs, facts):
    g, h = graph(logs, "linen_scan")
    check_invariants(h)
    body = group(h, "ScanTransformer/scan ×4")
    assert body.label == "scan ×4"
    inside = under(g, "ScanTransformer/scan ×4")
    # the body once: as many matmuls as one block of the unrolled model
    dots = [n for n in inside if n.op == "jax::dot_general"]
    unrolled, _ = graph(logs, "linen")
    assert len(dots) == len([n for n in under(unrolled, "Transformer/block_0") if n.op == "jax::dot_general"])
    assert all("/checkpoint/layers/Block_0/" in n.name for n in dots)  # nn.remat inside nn.scan, by name
    assert len(inside) == stacks_under(facts, "linen_scan", "ScanTransformer/layers") - len(
        under(g, "ScanTransformer/layers")) + 1  # + the scan op; layers/ outside the scan: its rng/broadcast ops
    # its stacked parameters (a leading axis of 4) are its inputs
    stacked = [n for n in g.node if n.name.startswith("params/layers/")]
    assert stacked and all(n.attr["_output_shapes"].list.shape[0].dim[0].size == 4 for n in stacked)
    readers = {n.name for n in g.node for i in n.input if i.startswith("params/layers/")}
    assert readers and all(r.startswith("ScanTransformer/scan ×4/") for r in readers)


def test_nnx_modules_are_named_as_pytorch_modules(logs, facts):
    g, h = graph(logs, "nnx")
    check_invariants(h)
    for i in range(3):
        scope = f"NTransformer/blocks/NBlock[{i}]"
        assert group(h, scope).cardinality == len(under(g, scope)) == facts["nnx_block_ops"] > 40
        group(h, f"{scope}/MultiHeadAttention[attn]/LinearGeneral[query]")
        group(h, f"{scope}/mlp/LayerNorm[ln2]")  # jax.named_scope("mlp") kept, the calls inside it
        assert group(h, f"{scope}/mlp/Linear[up]").cardinality == 3
    group(h, "NTransformer/Embed[embed]")
    # the recording is undone after add_graph: jax traced the same models afterwards without names
    assert not [s for run in ("nnx", "nnx_step") for s in facts[run]["stacks"] if "NBlock" in s]
    dots = [n for n in under(g, "NTransformer/blocks/NBlock[1]") if n.op == "jax::dot_general"]
    assert {n.attr["_source_line"].s.decode() for n in dots} >= {"x = x + self.attn(self.ln1(x))"}  # not the wrapper's
    query = next(n for n in g.node if n.name == "params/blocks/1/attn/query/kernel")
    assert query.op == "jax::parameter" and query.attr["_parameter"].s == b"params/blocks/1/attn/query/kernel"
    slim = h.slim
    k = slim.names.index(query.name)
    owner = slim.names[slim.owner[k]]  # drawn beside the op that reads it
    assert owner.startswith("NTransformer/blocks/NBlock[1]/MultiHeadAttention[attn]/LinearGeneral[query]/"), owner


def test_nnx_scan_over_layers(logs):
    g, h = graph(logs, "nnx_scan")
    check_invariants(h)
    assert group(h, "ScanNNX/scan ×4").label == "scan ×4"
    for sub in ("MultiHeadAttention[attn]/LinearGeneral[key]", "mlp/Linear[up]", "LayerNorm[ln1]"):
        assert group(h, f"ScanNNX/scan ×4/NBlock[layers]/{sub}").cardinality > 0
    assert [n.attr["_output_shapes"].list.shape[0].dim[0].size for n in g.node
            if n.name == "params/layers/up/kernel"] == [4]


@pytest.mark.parametrize("run,root", [("linen_step", "Transformer"), ("nnx_step", "NTransformer")])
def test_train_step_forward_backward_optimizer_apart(logs, facts, run, root):
    """jax's own frames are the oracle: every op under ``jvp(...)`` is forward (the model's
    scope or ``loss``), every op under ``transpose(...)`` is under ``backward/``, the rest is the
    optimizer (or at the top). jax names linen modules itself (their blocks are counted from its
    name stacks); NNX modules it does not name (traced without our recorder, the facts have
    ``jvp()`` only), so NNX blocks are checked against each other."""
    g, h = graph(logs, run)
    check_invariants(h)
    names = [n.name for n in g.node if not n.name.startswith(IO)]
    stacks = facts[run]["stacks"]
    forward = [s for s in stacks if s.startswith("jvp(")]
    backward = [s for s in stacks if s.startswith("transpose(")]
    assert len([n for n in names if n.startswith((root + "/", "loss/"))]) == len(forward) > 100
    assert len([n for n in names if n.startswith("backward/")]) == len(backward) > 100
    if run == "linen_step":
        assert group(h, f"backward/{root}/block_0").cardinality == sum(
            1 for s in backward if s.startswith(f"transpose(jvp({root}))/block_0")) > 50
        assert group(h, f"{root}/block_0").cardinality == sum(1 for s in forward if s.startswith(f"jvp({root})/block_0"))
    else:
        for side in ("", "backward/"):
            sizes = {group(h, f"{side}{root}/blocks/NBlock[{i}]").cardinality for i in range(2)}
            assert len(sizes) == 1 and sizes.pop() > 50, (side, sizes)
    plain = [s for s in stacks if "jvp(" not in s and "transpose(" not in s]
    optimizer = [n for n in names if n.startswith("optimizer/")]
    assert len(optimizer) + len([n for n in names if "/" not in n]) == len(plain)
    kernel = "params/block_0/Dense_0/kernel" if run == "linen_step" else "params/blocks/0/up/kernel"
    assert group(h, f"optimizer/{kernel}").cardinality >= 5  # adam's moments and the update, by parameter
    assert len({n.rsplit("/", 1)[0] for n in optimizer}) > 20
    assert group(h, "loss").cardinality > 5


@pytest.mark.parametrize("run", ["linen_step", "nnx_step", "nnx_scan"])
def test_no_edge_is_drawn_reversed_with_every_group_open(logs, run):
    _, h = graph(logs, run)
    every = [gr.name for gr in h.walk_groups() if gr.id != h.root.id]
    scene = build_scene(h, wire.GraphRef(run, "__run_graph__", wire.GraphKind.OP), every, cache=LayoutCache())
    assert not [(e.source, e.target) for e in scene.edges if e.reversed]


def test_shape_dtype_structs_need_no_arrays(logs, facts):
    g, _ = graph(logs, "shapes")
    embed = next(n for n in g.node if n.name == "params/embed/embedding")
    assert [d.size for d in embed.attr["_output_shapes"].list.shape[0].dim] == [100, 32]
    assert group(graph(logs, "shapes")[1], "NTransformer/blocks/NBlock[5]")
    assert facts["shapes"]["seconds"] < 30


def test_through_tensorboard_first_view_and_stock_graph(logs):
    app = TbApp(logs)
    try:
        runs = {r["run"] for r in app.json(OURS + "/graphs")["runs"]}
        assert {"linen", "linen_scan", "nnx", "nnx_scan", "linen_step", "nnx_step", "shapes"} <= runs
        scene = app.json(OURS + "/scene", run="nnx", tag="__run_graph__", kind="op", wait="60")
        assert scene["expanded"][:2] == ["NTransformer", "NTransformer/blocks"]
        shown = {n["name"] for n in scene["nodes"]}
        assert {f"NTransformer/blocks/NBlock[{i}]" for i in range(3)} <= shown or "NTransformer/blocks/NBlock[0-2]" in shown
        assert not [e for e in scene["edges"] if e.get("reversed")]
        scan = app.json(OURS + "/scene", run="linen_scan", tag="__run_graph__", kind="op", wait="60")
        assert "ScanTransformer/scan ×4" in scan["expanded"]
        assert [n["label"] for n in scan["nodes"] if n["name"] == "ScanTransformer/scan ×4"] == ["scan ×4"]
        stock = app.get(STOCK + "/graph", run="linen_step", conceptual="false")
        assert stock.status_code == 200
        text = stock.get_data(as_text=True)
        assert 'op: "jax::dot_general"' in text and "backward/Transformer/block_0" in text
        scan_text = app.get(STOCK + "/graph", run="linen_scan", conceptual="false").get_data(as_text=True)
        assert "ScanTransformer/scan ×4/checkpoint/layers/Block_0/Dense_0/dot_general" in scan_text
    finally:
        app.ours.pool.close()


def test_cli_summary_tree_reads_the_scopes(logs):
    out = subprocess.run([sys.executable, "-m", "tb_graph_plugin.cli", "summary", str(logs / "linen_scan"), "--tree"],
                         cwd=REPO, capture_output=True, text=True, timeout=120, check=True)
    summary = json.loads(out.stdout)
    labels = []

    def walk(node):
        labels.append(node.get("label"))
        for c in node.get("children") or []:
            walk(c)

    for node in summary["tree"] if isinstance(summary["tree"], list) else [summary["tree"]]:
        walk(node)
    assert "scan ×4" in labels and "Block_0" in labels


def test_untraceable_function_raises_capture_error_and_writes_nothing(tmp_path):
    script = f"""
import jax.numpy as jnp
from tb_graph_plugin.jax import add_graph, CaptureError
def f(x):
    if x.sum() > 0:  # Python control flow on a traced value
        return x
    return -x
try:
    add_graph({str(tmp_path / 'run')!r}, f, jnp.ones(3))
except CaptureError as e:
    print("CaptureError:", e)
"""
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert "CaptureError: tb_graph_plugin.jax.add_graph could not trace the function (TracerBoolConversionError" in out.stdout, out.stderr[-2000:]
    assert not (tmp_path / "run").exists()


def test_ingest_needs_no_jax():
    script = ("import sys; sys.modules['jax'] = None; sys.modules['flax'] = None\n"
              "import tb_graph_plugin.ingest.jax_program, tb_graph_plugin.ingest.jax_scopes, tb_graph_plugin.ingest.stablehlo\n"
              "print('ok')")
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "ok", out.stderr[-2000:]


# ---------------------------------------------------------------- StableHLO text (.mlir)

def _module_scopes(g, depth: int = 4) -> set:
    out = set()
    for n in g.node:
        parts = n.name.split("/")[:-1]
        if parts[:1] in (["input"], ["output"]):
            continue
        out.update("/".join(parts[:k]) for k in range(1, min(depth, len(parts)) + 1))
    return out


@pytest.mark.parametrize("run", ["linen_step", "nnx"])
def test_mlir_of_the_same_model_has_the_same_scopes(logs, run):
    from tb_graph_plugin.ingest.stablehlo import stablehlo_to_graph_def

    traced, _ = graph(logs, run)
    lowered = stablehlo_to_graph_def((logs / "mlir" / f"{run}.mlir").read_bytes(), run)
    assert _module_scopes(lowered) == _module_scopes(traced)
    params = {n.name for n in traced.node if n.op == "jax::parameter"}
    assert params and params == {n.name for n in lowered.node if n.op == "jax::parameter"}
    dots = [n for n in lowered.node if n.op == "stablehlo::dot_general"]
    assert len(dots) == len([n for n in traced.node if n.op == "jax::dot_general"])
    assert all(n.attr["_output_shapes"].list.shape and "contracting_dims" in n.attr["attributes"].s.decode()
               for n in dots)
    assert all(n.attr["_source"].s.decode().split("/")[-1].startswith("models.py:") for n in dots)


def test_mlir_scan_is_read_back_as_its_scan(logs):
    """JAX lowers ``scan`` to ``while``; the reader finds the scan again (the counter JAX names
    ``.../scan``, the bound in ``cond``): the same scopes as the jaxpr's, the loop's own
    ``cond`` and the per-step slicing (``jit(dynamic_index_in_dim)``) inside the group besides."""
    from tb_graph_plugin.ingest.stablehlo import stablehlo_to_graph_def

    lowered = stablehlo_to_graph_def((logs / "mlir" / "linen_scan.mlir").read_bytes(), "linen_scan")
    traced, _ = graph(logs, "linen_scan")
    extra = {s for s in _module_scopes(lowered, 20) - _module_scopes(traced, 20)}
    assert extra and all(s.startswith("ScanTransformer/scan ×4/") and s.split("/")[2] in ("cond", "jit(dynamic_index_in_dim)")
                         for s in extra), extra
    assert not _module_scopes(traced, 20) - _module_scopes(lowered, 20)
    h = build_hierarchy(build_slim_graph(lowered))
    check_invariants(h)
    assert group(h, "ScanTransformer/scan ×4").label == "scan ×4"
    assert group(h, "ScanTransformer/scan ×4/checkpoint/layers/Block_0").cardinality > 50


def test_mlir_upload_and_cli_need_no_jax(logs):
    blob = (logs / "mlir" / "linen_step.mlir").read_bytes()
    app = TbApp(logs)
    try:
        answer = json.loads(app.post(OURS + "/upload", blob, filename="step.mlir").get_data())
        assert answer["source"] == "StableHLO text (.mlir)" and answer["ops"] > 1000
        ref = answer["graph"]
        scene = app.json(OURS + "/scene", run=ref["run"], tag=ref["tag"], kind="op", wait="60",
                         expanded=json.dumps(["backward", "backward/Transformer"]))
        shown = {n["name"] for n in scene["nodes"]}
        assert {"Transformer", "backward/Transformer/block_0", "optimizer"} <= shown, sorted(shown)[:40]
        bad = app.post(OURS + "/upload", b"module @jit_f {\n  func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
                       b"    %0 = stablehlo.add %arg0, %9 : tensor<2xf32>\n    return %0 : tensor<2xf32>\n  }\n}\n",
                       filename="bad.mlir")
        assert bad.status_code == 400 and "reads %9, which no op defines" in bad.get_data(as_text=True)
    finally:
        app.ours.pool.close()
    script = ("import sys, runpy; sys.modules['jax'] = None; sys.modules['flax'] = None\n"
              f"sys.argv = ['tb-graph', 'summary', {str(logs / 'mlir' / 'nnx.mlir')!r}]\n"
              "runpy.run_module('tb_graph_plugin.cli', run_name='__main__')")
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    summary = json.loads(out.stdout)
    assert [t["name"] for t in summary["top_level"] if t["kind"] == "meta"][:1] == ["NTransformer"] or \
        "NTransformer" in {t["name"] for t in summary["top_level"]}


def test_gradient_norms_colour_the_module_groups(logs, facts):
    written = facts["grad_norm"]
    assert "Transformer/block_0/Dense_0" in written[1] and "backward/Transformer/block_0/Dense_0" in written[1]
    assert "Transformer/Embed_0" in written[1]  # the module, not the jit(_take) it calls
    app = TbApp(logs, samples_per_plugin={"graph_explorer_node_data": 0})
    try:
        answer = app.json(OURS + "/node_data", run="linen_step", tag="__run_graph__", kind="op", wait="60",
                          data_tag="grad_norm", data_step="1", expanded=json.dumps(["Transformer"]), agg="max")
        assert answer["unmatched"] == 0 and answer["matched"] == len(written[1])
        block = max(v for k, v in written[1].items() if k.startswith("Transformer/block_0/"))
        assert answer["values"]["Transformer/block_0"] == pytest.approx(block)  # a collapsed block: max inside
        assert answer["steps"] == [0, 1]
    finally:
        app.ours.pool.close()
