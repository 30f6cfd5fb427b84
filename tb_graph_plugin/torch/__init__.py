"""PyTorch front end: ``add_graph(log, model, args, kwargs)`` writes a model's graph for TensorBoard.

torch is an optional dependency (``pip install tb-graph-plugin[torch]``), imported only by this
package. The pipeline, in order:

1. ``capture.capture_model``: ``torch.export.export(..., strict=False)``, else the retries a user would
   try (outputs returned flat, a Hugging Face ``use_cache`` off, a JIT trace), else one error
   naming each cause;
2. ``capture.program_json``: the ExportedProgram serialized to torch's JSON schema (no weights);
3. ``ingest.exported_program``: JSON -> GraphDef (one scope per module call, glue named by its
   function; the same reader opens ``.pt2`` files on the server, which needs no torch);
4. ``summary.event_writer.write_graph``: the GraphDef as the run graph at ``step`` (a ``graph_def`` event), where
   TensorBoard keeps one, so the stock Graphs tab shows it too.

With ``loss_fn`` (and ``optimizer``) ``add_graph`` writes a training step instead
(``training.training_step_json``: export of model + loss, one fake-tensor trace of forward,
backward and the optimizer's step, then step 3). ``add_compiled_graph`` writes what
``torch.compile`` made of a call (``compiled.compiled_program_json``: the Dynamo graphs, their
breaks and Inductor's kernels, then step 3) and node data tags ``compiled_graph`` and ``kernel``.

Example::

    import torch
    from tb_graph_plugin.torch import add_graph
    add_graph("logs/run1", model, (torch.rand(1, 3, 224, 224),))
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from tb_graph_plugin.torch.capture import CaptureError, Capture, capture_model, program_json
from tb_graph_plugin.summary.event_writer import write_graph

__all__ = ["add_graph", "add_compiled_graph", "CaptureError"]


def add_graph(log: Any, model, args=(), kwargs: Optional[dict] = None, *, step: int = 0,
              loss_fn: Optional[Callable] = None, optimizer=None):
    """Capture ``model(*args, **kwargs)`` and write its graph to ``log``; return the GraphDef.

    ``log`` is a logdir path or a ``torch.utils.tensorboard.SummaryWriter``. What was retried
    (``use_cache`` off, a JIT trace) is issued as a warning. Raises ``CaptureError`` when every
    way of capturing failed.

    With ``loss_fn`` (``loss_fn(output) -> scalar tensor``, closing over the targets) the graph
    is a training step (``training.py``): the forward, ``loss/``, ``backward/`` + each forward
    scope, and with ``optimizer`` (a ``torch.optim`` optimizer over the model's parameters)
    ``optimizer/`` + each parameter's path, its state as inputs. Traced on fake tensors: the
    model's parameters, gradients and buffers and the optimizer's state are left as they were.
    """
    if not isinstance(args, tuple):
        args = (args,)
    if loss_fn is not None:
        from tb_graph_plugin.ingest.exported_program import exported_program_to_graph_def
        from tb_graph_plugin.torch.training import training_step_json

        graph_def = exported_program_to_graph_def(
            training_step_json(model, args, kwargs or {}, loss_fn, optimizer), "the training step")
        write_graph(log, graph_def, step)
        return graph_def
    if optimizer is not None:
        raise ValueError("add_graph: an optimizer needs a loss_fn (the update follows the backward pass)")
    result: Capture = capture_model(model, args, kwargs or {})
    graph_def = result.graph_def
    if graph_def is None:
        from tb_graph_plugin.ingest.exported_program import exported_program_to_graph_def

        graph_def = exported_program_to_graph_def(program_json(result), "the exported program")
    write_graph(log, graph_def, step)
    return graph_def


def add_compiled_graph(log: Any, fn, args=(), kwargs: Optional[dict] = None, *, step: int = 0,
                       backend: Any = "inductor"):
    """Run ``fn`` (a module or function) once under ``torch.compile`` and write one graph of the
    call: every Dynamo graph's ops (attr ``_compiled_graph``, the graph's index in run order),
    a ``graph_break`` op between two graphs (attrs ``reason``, ``source``) in the module call
    that broke, where Inductor reports it the kernel each op went into (``_kernel``)
    (``compiled.py``). ``backend`` is handed each graph. Returns ``(GraphDef, CompileSummary)``.
    Raises ``CaptureError`` when the call or its lowering fails (nothing is written).
    """
    from tb_graph_plugin.ingest.exported_program import exported_program_to_graph_def
    from tb_graph_plugin.torch.compiled import compiled_program_json

    if not isinstance(args, tuple):
        args = (args,)
    try:
        program, summary = compiled_program_json(fn, args, kwargs or {}, backend)
    except Exception as e:  # noqa: BLE001 - one error naming the cause
        raise CaptureError("tb_graph_plugin.torch.add_compiled_graph: the compiled call failed: "
                           f"{type(e).__name__}: {str(e)[:400]}") from e
    graph_def = exported_program_to_graph_def(program, "the compiled graphs")
    write_graph(log, graph_def, step)
    _write_compile_colours(log, graph_def, step)
    _write_compile_facts(log, summary, step)
    return graph_def, summary


# a categorical palette (Tableau 10) for the compiled graphs' and kernels' node data
_PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
            "#9c755f", "#bab0ac")


def _write_compile_facts(log, summary, step: int) -> None:
    """The counts of ``summary`` beside the graph (``summary.compile_facts_event``): the run
    listing shows the break count before the graph is opened."""
    import dataclasses

    from tb_graph_plugin.summary import compile_facts_event
    from tb_graph_plugin.summary.event_writer import write_events

    write_events(log, [compile_facts_event(dataclasses.asdict(summary), step)])


def _write_compile_colours(log, graph_def, step: int) -> None:
    """Node data tags ``compiled_graph`` (each op's Dynamo graph index) and ``kernel`` (each op's
    Inductor kernel, numbered in order of first appearance; the name is the op's ``_kernel``), with
    one threshold colour per value, so **Colour -> Node data: compiled_graph / kernel** tells
    the graphs and the kernels apart."""
    from tb_graph_plugin.summary import node_data

    graphs = {n.name: n.attr["_compiled_graph"].i for n in graph_def.node if "_compiled_graph" in n.attr}
    kernel_ids: dict = {}
    kernels = {}
    for n in graph_def.node:
        if "_kernel" in n.attr:
            kernels[n.name] = kernel_ids.setdefault(n.attr["_kernel"].s.decode(), len(kernel_ids))
    for tag, values, count in (("compiled_graph", graphs, max(graphs.values(), default=-1) + 1),
                               ("kernel", kernels, len(kernel_ids))):
        if values:
            node_data(log, tag, values, step,
                      thresholds=[{"value": k, "bgColor": _PALETTE[k % len(_PALETTE)]} for k in range(count)])
