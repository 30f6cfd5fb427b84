"""Sub-jaxprs as groups (issue 42): ``scan`` (a ``fori_loop`` with static bounds), ``cond``,
a nested ``jit``, ``checkpoint`` (remat), ``custom_jvp`` (``jax.nn.relu``), ``custom_vjp``, and a
``jax.named_scope``, forward and backward, in one real ``jax.grad`` traced by ``graph_def``."""

from __future__ import annotations

from collections import Counter


def _grad_graph():
    import jax
    import jax.numpy as jnp

    from tb_graph_plugin.jax import graph_def

    @jax.custom_vjp
    def clip_grad(x):
        return x

    clip_grad.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1, 1),))

    @jax.jit
    def inner(x):
        return jnp.tanh(x) * 2

    def f(w, x):
        with jax.named_scope("encoder"):
            h = jax.nn.relu(x @ w)
            h = jax.checkpoint(lambda h: jnp.sin(h) + 1)(h)
        h = jax.lax.fori_loop(0, 3, lambda i, h: h * 0.5, h)
        h = jax.lax.cond(h.sum() > 0, lambda h: h + 1, lambda h: h - 1, h)
        return clip_grad(inner(h)).sum()

    return graph_def(jax.grad(f), jnp.ones((4, 4)), jnp.ones((2, 4)))


def test_sub_programs_are_groups_forward_and_backward():
    g = _grad_graph()
    scopes = Counter(n.name.rsplit("/", 1)[0] for n in g.node if "/" in n.name)
    ops = {n.name: n.op for n in g.node}
    # forward: the named scope, relu's custom_jvp and its jit, the loop body once, both branches
    assert ops["encoder/dot_general"] == "jax::dot_general"
    assert scopes["encoder/custom_jvp(relu)/jit(relu)"] == 1
    assert ops["loss/scan ×3/scan"] == "jax::scan" and scopes["loss/scan ×3"] == 3  # add, mul, the scan op
    assert {"loss/cond/branch_0", "loss/cond/branch_1"} <= set(scopes) and ops["loss/cond/cond"] == "jax::cond"
    assert scopes["loss/jit(inner)"] == 3
    # backward: the transposed scan, the custom_vjp's bwd rule (jnp.clip, a jit), the remat's recompute
    assert ops["backward/loss/scan ×3/scan"] == "jax::scan"
    assert {n.rsplit("/", 1)[1] for n in ops if n.startswith("backward/loss/jit(clip)/")} >= {"max", "min"}
    assert any(n.startswith("backward/encoder/checkpoint/") and ops[n] == "jax::cos" for n in ops)
    assert ops["backward/encoder/dot_general"] == "jax::dot_general"
    scan = next(n for n in g.node if n.name == "loss/scan ×3/scan")
    assert scan.attr["length"].i == 3 and [d.size for d in scan.attr["_output_shapes"].list.shape[-1].dim] == [2, 4]


def test_nnx_cnn_train_step_with_batch_norm_and_dropout():
    """An NNX CNN trained with ``nnx.Optimizer`` (SGD with momentum): BatchNorm's running
    statistics and Dropout's RNG state are inputs by path (not parameters), each block a group
    forward and backward, the momentum update per parameter."""
    import jax.numpy as jnp
    import optax
    from flax import nnx

    from tb_graph_plugin.jax import graph_def

    class ConvBlock(nnx.Module):
        def __init__(self, cin, cout, rngs):
            self.conv = nnx.Conv(cin, cout, (3, 3), rngs=rngs)
            self.bn = nnx.BatchNorm(cout, rngs=rngs)
            self.drop = nnx.Dropout(0.1, rngs=rngs)

        def __call__(self, x):
            return self.drop(nnx.relu(self.bn(self.conv(x))))

    class CNN(nnx.Module):
        def __init__(self, rngs):
            self.blocks = nnx.List([ConvBlock(3, 16, rngs), ConvBlock(16, 32, rngs)])
            self.head = nnx.Linear(32, 10, rngs=rngs)

        def __call__(self, x):
            for b in self.blocks:
                x = b(x)
            return self.head(x.mean(axis=(1, 2)))

    model = CNN(nnx.Rngs(0, dropout=1))
    opt = nnx.Optimizer(model, optax.sgd(0.1, momentum=0.9), wrt=nnx.Param)

    @nnx.jit
    def step(model, opt, x, y):
        def loss_fn(m):
            return optax.softmax_cross_entropy_with_integer_labels(m(x), y).mean()
        loss, grads = nnx.value_and_grad(loss_fn)(model)
        opt.update(model, grads)
        return loss

    g = graph_def(step, model, opt, jnp.ones((4, 16, 16, 3)), jnp.zeros((4,), jnp.int32))
    names = {n.name: n for n in g.node}
    scopes = {n.rsplit("/", 1)[0] for n in names}
    for i in range(2):
        block = f"CNN/blocks/ConvBlock[{i}]"
        assert {f"{block}/Conv[conv]", f"{block}/BatchNorm[bn]", f"{block}/Dropout[drop]"} <= scopes
        assert any(s.startswith(f"backward/{block}") for s in scopes)
        assert names[f"params/blocks/{i}/conv/kernel"].op == "jax::parameter"
        assert names[f"input/model/blocks/{i}/bn/mean"].op == "IO Node"  # a BatchStat, not a Param
        assert f"optimizer/params/blocks/{i}/conv/kernel" in scopes
    assert any(n.startswith("input/model/blocks/0/drop/rngs/") for n in names)


def test_nnx_module_that_is_not_a_pytree():
    """``nnx.Module`` with ``pytree=False``: split into ``params`` and ``state`` and merged back
    while tracing, so its parameters are inputs by path (not constants) and its calls named."""
    import jax.numpy as jnp
    from flax import nnx

    from tb_graph_plugin.jax import graph_def

    class Mlp(nnx.Module, pytree=False):
        def __init__(self, rngs):
            self.up = nnx.Linear(4, 8, rngs=rngs)
            self.down = nnx.Linear(8, 4, rngs=rngs)

        def __call__(self, x):
            return self.down(nnx.relu(self.up(x)))

    g = graph_def(Mlp(nnx.Rngs(0)), jnp.ones((2, 4)))
    ops = {n.name: n.op for n in g.node}
    assert ops["params/up/kernel"] == "jax::parameter" and ops["params/down/bias"] == "jax::parameter"
    assert ops["Mlp/Linear[up]/dot_general"] == ops["Mlp/Linear[down]/dot_general"] == "jax::dot_general"
    assert not [n for n in ops if n.startswith("input/const")]
