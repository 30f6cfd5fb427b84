"""``tb_graph_plugin.torch.add_graph(..., loss_fn=, optimizer=)``: one training step drawn (issue 41).

Real models, real optimizers, each after one real training step (so the optimizer has state):
a hand-written CNN (BatchNorm, a ReLU module called twice, a residual) with SGD + momentum, and a
Hugging Face LLaMA (tiny config) with AdamW. The graph is read back from the event file written.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from tb_graph_plugin import wire  # noqa: E402
from tb_graph_plugin.graph import build_slim_graph  # noqa: E402
from tb_graph_plugin.hierarchy import build_hierarchy  # noqa: E402
from tb_graph_plugin.ingest.local import load_graph_def_from_path  # noqa: E402
from tb_graph_plugin.layout.scene import LayoutCache, build_scene  # noqa: E402
from tb_graph_plugin.layout.scene.first_view import first_view_expanded  # noqa: E402
from tb_graph_plugin.torch import CaptureError, add_graph  # noqa: E402
from tests.hierarchy.invariants import check_invariants  # noqa: E402


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(c, c, 3, 1, 1)

    def forward(self, x):
        return self.relu(self.conv2(self.relu(self.bn1(self.conv1(x)))) + x)  # relu called twice


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, 1, 1)
        self.blocks = nn.Sequential(Block(8), Block(8))
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        x = self.blocks(torch.relu(self.stem(x)))
        return self.head(x.mean(dim=(2, 3)))


def _cnn():
    torch.manual_seed(0)
    model = SmallCNN()
    x, y = torch.rand(4, 3, 8, 8), torch.randint(0, 10, (4,))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    return model, (x,), {}, (lambda out: nn.functional.cross_entropy(out, y)), optimizer


def _llama():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(transformers.LlamaConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
        vocab_size=100, max_position_embeddings=64, bos_token_id=0, eos_token_id=0))
    ids = torch.randint(0, 100, (2, 8))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    return model, (ids,), {}, (lambda out: out.logits.float().square().mean()), optimizer


MODELS = {"cnn": _cnn, "llama": _llama}


def _snapshot(model, optimizer) -> dict:
    """Every tensor the step could touch, copied: parameters, their grads, buffers, optimizer state."""
    snap = {f"param {n}": p.detach().clone() for n, p in model.named_parameters()}
    snap.update({f"grad {n}": (None if p.grad is None else p.grad.clone()) for n, p in model.named_parameters()})
    snap.update({f"buffer {n}": b.clone() for n, b in model.named_buffers()})
    for i, p in enumerate(optimizer.param_groups[0]["params"]):
        for k, v in optimizer.state.get(p, {}).items():
            snap[f"state {i} {k}"] = v.clone() if isinstance(v, torch.Tensor) else v
    snap["groups"] = [{k: v for k, v in g.items() if k != "params"} for g in optimizer.param_groups]
    return snap


def _same(a: dict, b: dict) -> list:
    bad = [k for k in a.keys() | b.keys() if k not in a or k not in b]
    for k in a.keys() & b.keys():
        x, y = a[k], b[k]
        if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
            if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.dtype == y.dtype
                    and torch.equal(x, y)):
                bad.append(k)
        elif x != y:
            bad.append(k)
    return sorted(bad)


_CAPTURED: dict = {}


def _captured(name, tmp_path_factory):
    if name not in _CAPTURED:
        model, args, kwargs, loss_fn, optimizer = MODELS[name]()
        loss_fn(model(*args, **kwargs)).backward()  # one real step: the optimizer has state
        optimizer.step()
        before = _snapshot(model, optimizer)
        log = tmp_path_factory.mktemp(f"train_{name}")
        written = add_graph(str(log), model, args, kwargs, loss_fn=loss_fn, optimizer=optimizer)
        after = _snapshot(model, optimizer)
        graph_def = load_graph_def_from_path(str(log))
        _CAPTURED[name] = (model, optimizer, before, after, written, graph_def)
    return _CAPTURED[name]


@pytest.mark.parametrize("name", MODELS)
def test_training_step_leaves_parameters_grads_and_optimizer_state_as_they_were(name, tmp_path_factory):
    _model, optimizer, before, after, _, _ = _captured(name, tmp_path_factory)
    assert any(k.startswith("state ") for k in before), "the optimizer has state to keep"
    assert any(v is not None for k, v in before.items() if k.startswith("grad ")), "there are grads to keep"
    assert _same(before, after) == []


@pytest.mark.parametrize("name", MODELS)
def test_every_parameter_with_a_grad_has_backward_ops_in_its_module_and_optimizer_ops_under_its_name(
        name, tmp_path_factory):
    model, _, _, _, written, graph_def = _captured(name, tmp_path_factory)
    assert [n.name for n in written.node] == [n.name for n in graph_def.node]  # the event file holds it
    names = [n.name for n in graph_def.node]
    params = {n.attr["_parameter"].s.decode(): n.name for n in graph_def.node if n.op == "torch::parameter"}
    missing = []
    for path, p in model.named_parameters():
        if p.grad is None:
            continue
        scope = params[path].rsplit("/", 1)[0]  # the module call holding the parameter
        opt_scope = "optimizer/" + path.replace(".", "/") + "/"
        if not any(n.startswith("backward/" + scope + "/") for n in names):
            missing.append(("backward", path, scope))
        if not any(n.startswith(opt_scope) for n in names):
            missing.append(("optimizer", path))
    assert missing == []
    states = [n for n in graph_def.node if n.op == "torch::optimizer_state"]
    expected = {"cnn": {"momentum_buffer"}, "llama": {"exp_avg", "exp_avg_sq", "step"}}[name]
    assert {n.name.rsplit("/", 1)[1] for n in states} == expected
    assert all(n.name.startswith("optimizer/") for n in states)
    assert [n.name for n in graph_def.node if n.name.startswith("loss/")]
    assert "output/loss" in names


def test_saved_activations_are_edges_from_forward_to_backward(tmp_path_factory):
    _, _, _, _, _, graph_def = _captured("cnn", tmp_path_factory)
    phase = {n.name: n.name.split("/", 1)[0] for n in graph_def.node}
    saved = {i.split(":")[0] for n in graph_def.node if phase[n.name] == "backward" for i in n.input
             if phase[i.split(":")[0]] == "SmallCNN"}
    # the convolutions' inputs, the relus' outputs (threshold_backward) and the batch norm's input
    assert {s for s in saved if s.endswith("/relu") or "ReLU[relu" in s}
    assert {s for s in saved if "BatchNorm2d[bn1]" in s or "Conv2d[conv1]/convolution" in s}
    # the optimizer reads the grads made in backward
    grads = {i.split(":")[0] for n in graph_def.node if phase[n.name] == "optimizer" for i in n.input
             if phase[i.split(":")[0]] == "backward"}
    assert any("Conv2d[stem]" in g for g in grads)


def test_backward_names_mirror_each_module_call(tmp_path_factory):
    _, _, _, _, _, graph_def = _captured("cnn", tmp_path_factory)
    names = {n.name for n in graph_def.node}
    for call in ("SmallCNN/Sequential[blocks]/Block[0]/ReLU[relu]", "SmallCNN/Sequential[blocks]/Block[0]/ReLU[relu@1]"):
        assert any(n.startswith(call + "/") for n in names), call
        assert any(n.startswith("backward/" + call + "/threshold_backward") for n in names), call
    # the gradient summed over a residual's two uses sits in the backward of the op that made it
    acc = [n for n in names if n.startswith("backward/") and n.rsplit("/", 1)[1].startswith("add")]
    assert acc and not [n for n in acc if n.startswith("backward/loss/")], acc


@pytest.mark.parametrize("name", MODELS)
def test_training_step_with_every_group_open_draws_no_edge_reversed(name, tmp_path_factory):
    _, _, _, _, _, graph_def = _captured(name, tmp_path_factory)
    h = build_hierarchy(build_slim_graph(graph_def))
    check_invariants(h)
    every = [g.name for g in h.walk_groups() if g.id != h.root.id]
    scene = build_scene(h, wire.GraphRef(run=name, tag="t", kind=wire.GraphKind.OP), every, cache=LayoutCache())
    assert [(e.source, e.target) for e in scene.edges if e.reversed] == []


@pytest.mark.parametrize("name", MODELS)
def test_training_step_first_view_shows_forward_backward_and_optimizer_as_blocks(name, tmp_path_factory):
    _, _, _, _, _, graph_def = _captured(name, tmp_path_factory)
    h = build_hierarchy(build_slim_graph(graph_def))
    expanded = first_view_expanded(h)
    scene = build_scene(h, wire.GraphRef(run=name, tag="t", kind=wire.GraphKind.OP), expanded, cache=LayoutCache())
    top = {n.name: n for n in scene.nodes if n.parent is None}
    forward = {"cnn": "SmallCNN", "llama": "LlamaForCausalLM"}[name]
    for block in (forward, "backward", "optimizer"):
        assert block in top, sorted(top)
        assert top[block].kind in (wire.NodeKind.META, wire.NodeKind.SERIES), top[block].kind
    # the forward opens; backward and optimizer, which mirror its tree, are one box each
    assert forward in expanded and "backward" not in expanded and "optimizer" not in expanded
    assert top["backward"].kind == top["optimizer"].kind == wire.NodeKind.META
    # drawn as the step runs: forward -> loss -> backward -> optimizer, no edge against the flow
    edges = {(e.source, e.target) for e in scene.edges}
    assert {(forward, "loss"), ("loss", "backward"), (forward, "backward"), ("backward", "optimizer")} <= edges
    assert [(e.source, e.target) for e in scene.edges if e.reversed] == []


def test_loss_without_scalar_is_a_clear_error(tmp_path):
    model, args, kwargs, _, optimizer = _cnn()
    with pytest.raises(CaptureError, match="scalar"):
        add_graph(str(tmp_path), model, args, kwargs, loss_fn=lambda out: out, optimizer=optimizer)
    assert not list(tmp_path.iterdir())  # nothing written


def test_optimizer_over_other_parameters_is_a_clear_error(tmp_path):
    model, args, kwargs, loss_fn, _ = _cnn()
    other = torch.optim.SGD([nn.Parameter(torch.zeros(2))], lr=0.1)
    with pytest.raises(CaptureError, match="not the model's"):
        add_graph(str(tmp_path), model, args, kwargs, loss_fn=loss_fn, optimizer=other)


def test_fresh_optimizer_first_step_makes_its_state_inside_the_graph(tmp_path):
    """No state yet (no step taken): the trace shows AdamW's first step, its moments made there
    (``zeros_like``) and its ``step`` counter a constant beside the update; the optimizer stays empty."""
    model, args, kwargs, loss_fn, _ = _cnn()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    graph_def = add_graph(str(tmp_path), model, args, kwargs, loss_fn=loss_fn, optimizer=optimizer)
    assert not optimizer.state and all(p.grad is None for p in model.parameters())
    names = [n.name for n in graph_def.node]
    assert "optimizer/head/weight/zeros_like" in names
    constants = [n.name for n in graph_def.node if n.op == "torch::constant"]
    assert constants and all(c.startswith(("optimizer/", "loss/")) for c in constants), constants
    assert not [n for n in graph_def.node if n.op == "torch::optimizer_state"]


def test_stock_graphs_tab_serves_the_training_step(tmp_path_factory):
    """The run graph is a plain ``graph_def`` event: TensorBoard's own graph plugin serves it."""
    from google.protobuf import text_format
    from tensorboard.compat.proto import graph_pb2

    from tests.tb_app import STOCK, TbApp

    model, args, kwargs, loss_fn, optimizer = _cnn()
    logdir = tmp_path_factory.mktemp("train_stock")
    written = add_graph(str(logdir / "step"), model, args, kwargs, loss_fn=loss_fn, optimizer=optimizer, step=2)
    app = TbApp(logdir)
    try:
        assert app.json(STOCK + "/info")["step"]["run_graph"]
        stock = graph_pb2.GraphDef()
        text_format.Parse(app.get(STOCK + "/graph", run="step").get_data(as_text=True), stock)
        assert [n.name for n in stock.node] == [n.name for n in written.node]
    finally:
        app.ours.pool.close()


def test_without_optimizer_frozen_parameters_get_no_backward_and_the_graph_ends_at_the_grads(tmp_path):
    model, args, kwargs, loss_fn, _ = _cnn()
    model.stem.requires_grad_(False)  # frozen: no gradient is computed for it
    graph_def = add_graph(str(tmp_path), model, args, kwargs, loss_fn=loss_fn)
    names = [n.name for n in graph_def.node]
    assert not [n for n in names if n.startswith("optimizer/")]
    conv_backward = [n for n in graph_def.node if n.name.startswith("backward/SmallCNN/Conv2d[stem]/")]
    # the stem's input needs no gradient and its weight none either: no convolution_backward there
    assert not [n for n in conv_backward if n.op == "aten::convolution_backward"], [n.name for n in conv_backward]
    assert [n for n in names if n.startswith("backward/SmallCNN/Linear[head]/")]
    assert all(p.grad is None for p in model.parameters())


def test_frozen_parameters_in_the_optimizer_take_no_gradient_and_no_update(tmp_path):
    """As torch runs it: a parameter that requires no grad gets none, and the optimizer skips it."""
    model, args, kwargs, loss_fn, optimizer = _cnn()  # the optimizer holds every parameter
    model.head.requires_grad_(False)
    graph_def = add_graph(str(tmp_path), model, args, kwargs, loss_fn=loss_fn, optimizer=optimizer)
    names = [n.name for n in graph_def.node]
    assert not [n for n in names if n.startswith("optimizer/head/")]
    assert [n for n in names if n.startswith("optimizer/stem/weight/")]
    assert not [n for n in names if n.startswith("backward/SmallCNN/Linear[head]/") and n.endswith(("/t_1", "/sum"))]


def test_called_under_no_grad_it_still_draws_the_backward(tmp_path):
    model, args, kwargs, loss_fn, optimizer = _cnn()
    with torch.no_grad():
        graph_def = add_graph(str(tmp_path), model, args, kwargs, loss_fn=loss_fn, optimizer=optimizer)
    names = [n.name for n in graph_def.node]
    assert [n for n in names if n.startswith("backward/SmallCNN/Conv2d[stem]/")]
    assert [n for n in names if n.startswith("optimizer/stem/weight/")]
