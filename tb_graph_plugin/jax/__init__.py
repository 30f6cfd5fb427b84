"""JAX front end: ``add_graph(log, fn, *args, step=0, **kwargs)`` writes a JAX function's graph.

jax (and Flax, for module names) are optional dependencies (``pip install
tb-graph-plugin[jax]``), imported only by this package. The pipeline, in order:

1. ``capture.trace``: ``jax.make_jaxpr`` of ``fn(*args, **kwargs)`` (abstract evaluation: no
   compilation, no device work; arguments may be ``jax.ShapeDtypeStruct``), with Flax NNX module
   calls named while tracing and the inputs' and outputs' pytree paths;
2. ``jaxpr.read_jaxpr``: the jaxpr -> ``ingest.jax_program.JaxProgram`` (ops with their name
   stacks and sub-programs, inputs by path);
3. ``ingest.jax_program.program_to_graph_def``: -> GraphDef (module scopes, ``backward/``,
   ``optimizer/``; the same naming as StableHLO text read on the server, which needs no jax);
4. ``summary.event_writer.write_graph``: the GraphDef as the run graph at ``step`` (a
   ``graph_def`` event), so the stock Graphs tab shows it too.

``stablehlo_text`` lowers the same way for a ``.mlir`` file (``ingest/stablehlo.py`` reads it).

Example::

    import jax, jax.numpy as jnp
    from tb_graph_plugin.jax import add_graph
    add_graph("logs/run1", train_step, params, opt_state, batch)      # a jitted step, any function
    add_graph("logs/run1", model, jax.ShapeDtypeStruct((8, 1024), jnp.int32))  # an NNX module
"""

from __future__ import annotations

from typing import Any

from tb_graph_plugin.ingest.jax_program import program_to_graph_def
from tb_graph_plugin.jax.capture import CaptureError, record_module_calls, trace
from tb_graph_plugin.jax.jaxpr import read_jaxpr
from tb_graph_plugin.summary.event_writer import write_graph

__all__ = ["add_graph", "graph_def", "stablehlo_text", "CaptureError"]


def graph_def(fn, *args, **kwargs):
    """The GraphDef of ``fn(*args, **kwargs)`` (steps 1-3 of the module docstring)."""
    traced = trace(fn, args, kwargs)
    return program_to_graph_def(read_jaxpr(traced.jaxpr, traced.in_paths, traced.out_paths))


def add_graph(log: Any, fn, *args, step: int = 0, **kwargs):
    """Trace ``fn(*args, **kwargs)`` and write its graph to ``log``; return the GraphDef.

    ``log`` is a logdir path or a writer with ``add_event`` (tensorboardX, torch's
    ``SummaryWriter``). With Flax's ``flax.metrics.tensorboard.SummaryWriter`` or CLU's metric
    writers (TensorFlow writers underneath), give their logdir: the graph goes in an event file
    of its own beside theirs, which TensorBoard reads as the same run. ``step`` is this call's
    keyword: a function argument named ``step`` must be passed positionally. Raises
    ``CaptureError`` when ``fn`` cannot be traced with these arguments; nothing is written then.
    """
    graph = graph_def(fn, *args, **kwargs)
    write_graph(log, graph, step)
    return graph


def stablehlo_text(fn, *args, **kwargs) -> str:
    """``jax.jit(fn).lower(*args, **kwargs).as_text(debug_info=True)`` with Flax NNX module calls
    named as ``add_graph`` names them (``Model/blocks/Block[0]``), for a ``.mlir`` file the server
    opens (Upload, ``tb-graph summary``) without jax. An NNX module given as ``fn`` is lowered with
    its ``nnx.Param`` state as an argument named ``params`` (so its parameters are named
    ``params/<path>``) and the rest of its state as ``state``.
    """
    import jax

    from tb_graph_plugin.jax.capture import _exclude_this_package, _nnx

    _exclude_this_package()  # the model's lines in the locations, not Flax's or the wrapper's
    nnx = _nnx()
    if nnx is not None and isinstance(fn, nnx.Module):
        graphdef, params, state = nnx.split(fn, nnx.Param, ...)

        def call(params, state, *a, **k):
            return nnx.merge(graphdef, params, state)(*a, **k)

        fn, args = call, (params, state) + tuple(args)
    with record_module_calls():
        return jax.jit(fn).lower(*args, **kwargs).as_text(debug_info=True)
