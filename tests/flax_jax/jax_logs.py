"""Write the JAX front end's test logs with the real jax / Flax / optax APIs, in a process of its own.

``python -m tests.flax_jax.jax_logs DIR`` writes one run per model with
``tb_graph_plugin.jax.add_graph`` (``DIR/<run>/``), the StableHLO text of some of them
(``DIR/mlir/<run>.mlir``, ``jax.jit(f).lower(...).as_text(debug_info=True)``) and
``DIR/facts.json``: what jax itself says about each traced program (equations per name-stack
prefix, counted by concatenating the name stacks of nested jaxprs), for the tests to compare
the graphs against.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import optax
from flax import nnx

from tb_graph_plugin.jax import add_graph, graph_def, stablehlo_text
from tb_graph_plugin.jax.node_data import tree_node_data
from tests.flax_jax import models

RUNS = ("linen", "linen_scan", "nnx", "nnx_scan", "linen_step", "nnx_step", "shapes")
_CALLS = {"jit", "pjit", "closed_call", "core_call", "remat", "remat2", "checkpoint", "custom_jvp_call",
          "custom_vjp_call", "custom_vjp_call_jaxpr", "scan", "while", "cond"}


def _eqn_stacks(jaxpr, prefix: str, out: list) -> None:
    """The full name stack of every equation that is not a call, nested jaxprs included."""
    for eqn in jaxpr.eqns:
        stack = str(eqn.source_info.name_stack)
        full = "/".join(p for p in (prefix, stack) if p)
        values = [v for p in eqn.params.values() for v in (p if isinstance(p, tuple) else (p,))]
        subs = [getattr(v, "jaxpr", v) for v in values if hasattr(v, "eqns") or hasattr(getattr(v, "jaxpr", None), "eqns")]
        if eqn.primitive.name in _CALLS and subs:
            for sub in subs:
                _eqn_stacks(sub, full, out)
            if eqn.primitive.name in ("scan", "while", "cond"):
                out.append(full)  # the loop / branch op itself
        else:
            out.append(full)


def main(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "mlir").mkdir(exist_ok=True)
    facts: dict = {}
    tokens = jnp.zeros((2, 8), jnp.int32)

    def record(run, fn, *args):
        started = time.perf_counter()
        add_graph(str(root / run), fn, *args)
        stacks: list = []
        if isinstance(fn, nnx.Module):  # traced as add_graph traces it: the module an argument
            fn, args = (lambda m, *a: m(*a)), (fn,) + args
        jax.clear_caches()  # jit caches the trace add_graph made (with NNX calls named): trace anew
        _eqn_stacks(jax.make_jaxpr(fn)(*args).jaxpr, "", stacks)
        facts[run] = {"stacks": stacks, "seconds": time.perf_counter() - started}

    linen = models.Transformer()
    params = linen.init(jax.random.PRNGKey(0), tokens)
    record("linen", linen.apply, params, tokens)
    scan = models.ScanTransformer()
    scan_params = scan.init(jax.random.PRNGKey(0), tokens)
    record("linen_scan", scan.apply, scan_params, tokens)
    (root / "mlir" / "linen_scan.mlir").write_text(
        jax.jit(scan.apply).lower(scan_params, tokens).as_text(debug_info=True))
    nnx_model = models.NTransformer(3, nnx.Rngs(0))
    record("nnx", nnx_model, tokens)
    # one NNX block traced alone (no names: jax records none for NNX): the ops a block group holds
    block: list = []
    x = jax.ShapeDtypeStruct((2, 8, 32), jnp.float32)
    _eqn_stacks(jax.make_jaxpr(lambda b, x: b(x))(nnx_model.blocks[0], x).jaxpr, "", block)
    facts["nnx_block_ops"] = len(block)
    nnx_scan = models.ScanNNX(4, nnx.Rngs(0))
    record("nnx_scan", nnx_scan, tokens)
    tx = optax.adamw(1e-3)
    step = models.linen_train_step(linen, tx)
    record("linen_step", step, params, tx.init(params), tokens)
    # gradient norms per module, two steps of real training (node data on the step's graph)
    graph = graph_def(step, params, tx.init(params), tokens)
    p, opt = params, tx.init(params)
    loss_fn = lambda p: optax.softmax_cross_entropy_with_integer_labels(linen.apply(p, tokens), tokens).mean()
    for k in range(2):
        grads = jax.grad(loss_fn)(p)
        facts.setdefault("grad_norm", []).append(tree_node_data(str(root / "linen_step"), "grad_norm", graph, grads, k))
        p, opt, _ = step(p, opt, tokens)
    (root / "mlir" / "linen_step.mlir").write_text(
        step.lower(params, tx.init(params), tokens).as_text(debug_info=True))
    (root / "mlir" / "nnx.mlir").write_text(stablehlo_text(nnx_model, tokens))
    step_model = models.NTransformer(2, nnx.Rngs(1))
    optimizer = nnx.Optimizer(step_model, optax.adam(1e-3), wrt=nnx.Param)
    record("nnx_step", models.nnx_train_step(), step_model, optimizer, tokens)
    # a model that is never allocated: its state from nnx.eval_shape, arguments ShapeDtypeStructs
    abstract = nnx.eval_shape(lambda: models.NTransformer(6, nnx.Rngs(0)))
    started = time.perf_counter()
    add_graph(str(root / "shapes"), abstract, jax.ShapeDtypeStruct((4, 128), jnp.int32))
    facts["shapes"] = {"seconds": time.perf_counter() - started}
    (root / "facts.json").write_text(json.dumps(facts))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
