"""Benchmark JAX graph capture + write: ``tb_graph_plugin.jax.add_graph`` (issue 42).

Usage::

    python -m bench.bench_jax_capture [--layers 24] [--repeat 5] [--big-layers 80] [--big-width 8192]

Two cases, each into a fresh logdir, wall seconds (median, min-max), process-CPU seconds, and
peak RSS growth:

1. ``step``: a Flax NNX decoder (``--layers`` blocks, width 256) train step, ``nnx.jit`` +
   ``nnx.value_and_grad`` + an ``nnx.Optimizer`` (optax AdamW), on real arrays; also the time
   of ``jax.make_jaxpr`` alone (the tracing jax does for any ``jit``) and the op count. JAX's
   caches are cleared before each run (``jax.clear_caches``): each traces from scratch;
2. ``big``: a 70B-shaped model (Llama-3-70B's widths: ``--big-layers`` 80 blocks, width
   ``--big-width`` 8192, MLP 28672, vocabulary 128256, 64 heads; without grouped-query
   attention, so 80B parameters) that is never allocated: its state from ``nnx.eval_shape``, its
   input a ``jax.ShapeDtypeStruct`` (the forward; its memory is the point: the model would be
   160 GB in bf16).

The model is defined here (attention + SwiGLU MLP + RMSNorm blocks), not taken from a library.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _models():
    import jax
    import jax.numpy as jnp
    from flax import nnx

    class Block(nnx.Module):
        def __init__(self, width, mlp, heads, rngs, dtype=jnp.float32):
            self.attn_norm = nnx.RMSNorm(width, rngs=rngs, param_dtype=dtype)
            self.attn = nnx.MultiHeadAttention(num_heads=heads, in_features=width, decode=False, rngs=rngs,
                                               param_dtype=dtype, use_bias=False)
            self.mlp_norm = nnx.RMSNorm(width, rngs=rngs, param_dtype=dtype)
            self.gate = nnx.Linear(width, mlp, use_bias=False, rngs=rngs, param_dtype=dtype)
            self.up = nnx.Linear(width, mlp, use_bias=False, rngs=rngs, param_dtype=dtype)
            self.down = nnx.Linear(mlp, width, use_bias=False, rngs=rngs, param_dtype=dtype)

        def __call__(self, x):
            x = x + self.attn(self.attn_norm(x))
            h = self.mlp_norm(x)
            return x + self.down(jax.nn.silu(self.gate(h)) * self.up(h))

    class Decoder(nnx.Module):
        def __init__(self, layers, width, mlp, heads, vocab, rngs, dtype=jnp.float32):
            self.embed = nnx.Embed(vocab, width, rngs=rngs, param_dtype=dtype)
            self.layers = nnx.List([Block(width, mlp, heads, rngs, dtype) for _ in range(layers)])
            self.norm = nnx.RMSNorm(width, rngs=rngs, param_dtype=dtype)
            self.head = nnx.Linear(width, vocab, use_bias=False, rngs=rngs, param_dtype=dtype)

        def __call__(self, tokens):
            x = self.embed(tokens)
            for layer in self.layers:
                x = layer(x)
            return self.head(self.norm(x))

    return Decoder


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=24)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--big-layers", type=int, default=80)
    ap.add_argument("--big-width", type=int, default=8192)
    ap.add_argument("--case", choices=("step", "big", "both"), default="both",
                    help="'big' alone gives its own peak RSS (ru_maxrss is the process's peak)")
    args = ap.parse_args(argv)
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    Decoder = _models()
    if args.case != "big":
        _step(args, Decoder)
    if args.case != "step":
        _big(args, Decoder)
    return 0


def _step(args, Decoder) -> None:
    import jax
    import jax.numpy as jnp
    import optax
    from flax import nnx

    from tb_graph_plugin.jax import add_graph

    model = Decoder(args.layers, 256, 1024, 4, 1000, nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adamw(1e-3), wrt=nnx.Param)
    tokens = jnp.zeros((2, 64), jnp.int32)

    @nnx.jit
    def train_step(model, optimizer, tokens):
        def loss_fn(model):
            logits = model(tokens)
            return optax.softmax_cross_entropy_with_integer_labels(logits, tokens).mean()
        loss, grads = nnx.value_and_grad(loss_fn)(model)
        optimizer.update(model, grads)
        return loss

    wall, cpu, trace = [], [], []
    ops = 0
    for _ in range(args.repeat):
        jax.clear_caches()  # every run traces from scratch (jit caches its traces)
        with tempfile.TemporaryDirectory() as d:
            t0, c0 = time.perf_counter(), time.process_time()
            graph = add_graph(d, train_step, model, optimizer, tokens)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            ops = len(graph.node)
        jax.clear_caches()
        t0 = time.perf_counter()
        jax.make_jaxpr(lambda m, o, t: train_step(m, o, t))(model, optimizer, tokens)
        trace.append(time.perf_counter() - t0)

    def show(xs):
        return f"{statistics.median(xs):.2f} s ({min(xs):.2f}-{max(xs):.2f})"

    print(f"step: {args.layers}-layer NNX decoder train step: add_graph {show(wall)}, cpu {statistics.median(cpu):.2f} s, "
          f"jax.make_jaxpr alone {show(trace)}, {ops:,} nodes")


def _big(args, Decoder) -> None:
    import jax
    import jax.numpy as jnp
    from flax import nnx

    from tb_graph_plugin.jax import add_graph

    rss0 = _rss_mb()
    t0, c0 = time.perf_counter(), time.process_time()
    abstract = nnx.eval_shape(lambda: Decoder(args.big_layers, args.big_width, 28672, 64, 128256, nnx.Rngs(0),
                                              dtype=jnp.bfloat16))
    made = time.perf_counter() - t0
    params = sum(x.size for x in jax.tree_util.tree_leaves(nnx.state(abstract, nnx.Param)))
    with tempfile.TemporaryDirectory() as d:
        t1 = time.perf_counter()
        graph = add_graph(d, abstract, jax.ShapeDtypeStruct((1, 4096), jnp.int32))
        took = time.perf_counter() - t1
        size = sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d))
    print(f"big: {args.big_layers} blocks, width {args.big_width}, {params / 1e9:.1f}B parameters (never allocated): "
          f"eval_shape {made:.2f} s, add_graph {took:.2f} s, cpu {time.process_time() - c0:.2f} s, "
          f"{len(graph.node):,} nodes, event file {size / 1e6:.1f} MB, peak RSS {_rss_mb():.0f} MB "
          f"(+{_rss_mb() - rss0:.0f} MB)")


if __name__ == "__main__":
    sys.exit(main())
