"""Fuzz the StableHLO text reader (``ingest/stablehlo.py``, issue 42) as ``test_fuzz_parsers``
fuzzes the others: hypothesis mutations of real ``.mlir`` text JAX wrote.

The seed is ``jax.jit(jax.grad(loss)).lower(params, x).as_text(debug_info=True)`` of a small Flax
linen model (an ``nn.scan`` over ``nn.remat`` blocks, a ``lax.cond``: ``while``, ``case``,
``func.call`` and reducer regions), written in a process of its own. Post-condition for every
input: the reader returns a GraphDef the SlimGraph and Hierarchy builds accept, or raises a
``tensorboard.errors.PublicError`` (or ``GraphTooLarge``); never another exception, never a hang.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given

from tb_graph_plugin.ingest import parse, stablehlo
from tests.hostile.test_fuzz_parsers import FUZZ, MUTATIONS, build_graph, mutate, only_public_errors

REPO = Path(__file__).resolve().parents[2]
SEED_WRITER = """
import sys, jax, jax.numpy as jnp, flax.linen as nn
class Block(nn.Module):
    @nn.compact
    def __call__(self, x, _):
        return x + nn.relu(nn.Dense(8)(nn.LayerNorm()(x))), None
class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        x, _ = nn.scan(nn.remat(Block), variable_axes={"params": 0}, split_rngs={"params": True}, length=2)(name="layers")(x, None)
        x = jax.lax.cond(x.sum() > 0, lambda x: x * 2, lambda x: x - 1, x)
        return nn.Dense(2)(x).sum()
m = Model(); x = jnp.ones((2, 8)); p = m.init(jax.random.PRNGKey(0), x)
open(sys.argv[1], "w").write(jax.jit(jax.grad(lambda p, x: m.apply(p, x))).lower(p, x).as_text(debug_info=True))
"""


@pytest.fixture(scope="module")
def seed(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("mlir_seed") / "grad.mlir"
    subprocess.run([sys.executable, "-c", SEED_WRITER, str(path)], check=True, timeout=300, cwd=REPO,
                   env=dict(os.environ, JAX_PLATFORMS="cpu"))
    return path.read_bytes()


def test_seed_reads(seed):
    graph = stablehlo.stablehlo_to_graph_def(seed, "seed")
    names = {n.name for n in graph.node}
    assert any(n.startswith("backward/Model/scan ×2/checkpoint/layers/Dense_0/") for n in names), sorted(names)[:30]
    assert "params/layers/Dense_0/kernel" in names
    build_graph(graph)


def _read(blob):
    try:
        return stablehlo.stablehlo_to_graph_def(blob, "fuzz", 100_000)
    except parse.GraphTooLarge:
        return None


@FUZZ
@given(mutations=MUTATIONS)
def test_fuzz_stablehlo_text(seed, mutations):
    graph = only_public_errors(_read, mutate(seed, mutations))
    if graph is not None:
        build_graph(graph)


@pytest.mark.parametrize("text", [
    b"",
    b"module @m {\n}\n",
    b"\xff\xfe module",
    b'#loc1 = loc(fused[#loc1])\nmodule @m {\n  func.func public @main(%arg0: tensor<2xf32> loc(#loc1)) -> tensor<2xf32> {\n'
    b'    %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32> loc(#loc1)\n    return %0 : tensor<2xf32> loc(#loc1)\n  }\n}\n',
    b"module @m {\n  func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
    b"    %0 = func.call @main(%arg0) : (tensor<2xf32>) -> tensor<2xf32>\n    return %0 : tensor<2xf32>\n  }\n}\n",
    b'#loc1 = loc(' + b'"a"(' * 5000 + b'unknown' + b')' * 5000 + b')\nmodule @m {\n  func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n'
    b'    %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32> loc(#loc1)\n    return %0 : tensor<2xf32>\n  }\n}\n',
])
def test_bad_text_is_refused_with_a_reason(text):
    """Empty, no @main, not UTF-8, a location that names itself, a function calling itself, a
    location nested 5000 deep: each a 400 whose message says why, or a graph (the self-naming
    location is just no name)."""
    try:
        graph = stablehlo.stablehlo_to_graph_def(text, "bad.mlir")
    except Exception as e:  # noqa: BLE001 - the type is the assertion
        from tensorboard import errors

        assert isinstance(e, errors.InvalidArgumentError), repr(e)
        assert "bad.mlir" in str(e)
        return
    build_graph(graph)
