"""The cost of a JAX program (issue 43 on issue 42's front end): a Flax Linen transformer captured
with ``tb_graph_plugin.jax.graph_def``, its parameters counted as jax counts its pytree's leaves,
its FLOPs against XLA's own ``cost_analysis`` of the same compiled function; the training step
(``value_and_grad`` + Adam) counts the same parameters (the optimizer's moments are inputs, not
parameters) and knows the cost of the backward's ``add_any``."""

from __future__ import annotations

import pytest

from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import build_hierarchy
from tb_graph_plugin.hierarchy.cost import node_cost

jax = pytest.importorskip("jax")
optax = pytest.importorskip("optax")


def _cost(graph_def):
    h = build_hierarchy(build_slim_graph(graph_def))
    return h, node_cost(h, h.root.id)


def test_linen_transformer_params_and_flops_match_jax_and_xla():
    import jax.numpy as jnp

    from tb_graph_plugin.jax import graph_def
    from tests.flax_jax import models

    model, tokens = models.Transformer(), jnp.zeros((2, 8), jnp.int32)
    params = model.init(jax.random.PRNGKey(0), tokens)
    h, cost = _cost(graph_def(model.apply, params, tokens))
    leaves = jax.tree_util.tree_leaves(params)
    assert cost.params == sum(x.size for x in leaves) and cost.param_bytes == sum(x.nbytes for x in leaves)
    assert cost.unknown_ops == 0, cost.unknown_op_types
    analysis = jax.jit(model.apply).lower(params, tokens).compile().cost_analysis()
    xla = (analysis[0] if isinstance(analysis, list) else analysis)["flops"]
    assert abs(cost.flops - xla) <= 0.02 * xla, (cost.flops, xla)
    # a block's own cost: its parameters are its subtree's
    block = next(g for g in h.walk_groups() if h.name_of(g.id).endswith("block_0"))
    own = sum(x.size for x in jax.tree_util.tree_leaves(params["params"]["block_0"]))
    assert node_cost(h, block.id).params == own


def test_linen_train_step_counts_the_model_params_once():
    import jax.numpy as jnp

    from tb_graph_plugin.jax import graph_def
    from tests.flax_jax import models

    model, tokens, tx = models.Transformer(), jnp.zeros((2, 8), jnp.int32), optax.adam(1e-3)
    params = model.init(jax.random.PRNGKey(0), tokens)
    _, forward = _cost(graph_def(model.apply, params, tokens))
    _, step = _cost(graph_def(models.linen_train_step(model, tx), params, tx.init(params), tokens))
    assert step.params == forward.params
    assert "jax::add_any" not in step.unknown_op_types
    assert step.flops > 2 * forward.flops  # forward, backward (about twice) and the update


def test_linen_convolutions_plain_depthwise_and_transposed():
    """``conv_general_dilated`` as Flax's ``Conv`` (strided), a depthwise ``Conv``
    (``feature_group_count``) and ``ConvTranspose`` (``lhs_dilation``) lower it: each op's FLOPs are
    2 · its multiply-adds counted by hand; the model's total is XLA's within 5 % (XLA counts the
    elementwise ops its own way)."""
    import jax.numpy as jnp
    from flax import linen as nn

    from tb_graph_plugin.jax import graph_def

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.relu(nn.Conv(16, (3, 3), strides=2, name="plain")(x))
            x = nn.Conv(16, (3, 3), feature_group_count=16, name="depthwise")(x)
            x = nn.ConvTranspose(8, (2, 2), strides=(2, 2), name="up")(x)
            return nn.Dense(10)(x.mean((1, 2)))

    model, x = CNN(), jnp.zeros((2, 32, 32, 3))
    params = model.init(jax.random.PRNGKey(0), x)
    h, cost = _cost(graph_def(model.apply, params, x))
    assert cost.unknown_ops == 0, cost.unknown_op_types
    convs = {h.name_of(i).split("/")[-2]: node_cost(h, i).flops for i in range(h.n_ops)
             if h.slim.ops[i] == "jax::conv_general_dilated"}
    assert convs == {"plain": 2 * (2 * 16 * 16 * 16) * (3 * 3 * 3),  # out elements x (3x3 kernel x 3 channels)
                     "depthwise": 2 * (2 * 16 * 16 * 16) * (3 * 3),  # one channel each
                     "up": 2 * (2 * 16 * 16 * 16) * (2 * 2 * 8)}, convs  # each input spread over 2x2 x 8 outputs
    analysis = jax.jit(model.apply).lower(params, x).compile().cost_analysis()
    xla = (analysis[0] if isinstance(analysis, list) else analysis)["flops"]
    assert abs(cost.flops - xla) <= 0.05 * xla, (cost.flops, xla)
