"""What ``torch.compile`` makes of a call: its Dynamo graphs, the breaks between them, as one program JSON.

Issue 41. The steps, in order:

1. ``torch.compile(fn, backend=recorder)`` called once on the inputs: the recorder receives each
   Dynamo graph (``GraphModule`` and example inputs, in run order; recompilations included) with
   the reason it ended (``gm.compile_subgraph_reason``: ``graph_break``, ``reason``,
   ``user_stack``) and the compile id (``torch._guards.CompileContext``), and hands it on to
   ``backend`` (a name Dynamo knows, or a callable);
2. each graph lowered to aten ops: ``make_fx`` of an ``fx.Interpreter`` over it under
   ``fx.traceback.preserve_node_meta()`` (the ops keep their Dynamo node's ``nn_module_stack``
   and ``stack_trace``), on Dynamo's own fake tensors;
3. one program of all graphs: each op's ``meta["custom"]["tb_compiled_graph"]`` its graph index,
   parameters (Dynamo lifts them as inputs, ``L['self']._modules['fc']._parameters['weight']``)
   shared across graphs by path, the module paths of ``nn_module_stack`` (``L['self'].layers[0]``)
   as export writes them (``layers.0``), a ``graph_break`` op after each graph that ended in a
   break (attrs ``reason``, ``source``), reading that graph's outputs and feeding the next
   graph's inputs, placed in the module call whose source line broke; breaks come from
   Dynamo's list of break reasons (``torch._dynamo.utils.graph_break_reasons``), so a break
   whose frame traced nothing before it (no graph of its own) is drawn too (``compile_places.events``);
   a nested module's frame (Dynamo compiles it as its own frame, ``self`` its root) is placed
   by its ``self``, its lifted parameters' paths in the model, or the ``forward`` holding its
   lines (``compile_places.frame_prefix``); a graph's input that is an input of the call or an earlier graph's
   output (by identity: the recorder wraps each compiled graph and keeps its outputs of the
   call) reads that input node or op; the kernel of each op from Inductor's provenance mapping
   (``compile_recorder.kernels``);
4. serialized with torch's ``GraphModuleSerializer``; ``ingest/exported_program.py`` names it.

Private torch APIs: ``GraphModule.compile_subgraph_reason``, ``torch._dynamo.utils.graph_break_reasons``,
``torch._guards.CompileContext``, ``torch._guards.detect_fake_mode``, ``torch._dynamo.lookup_backend``,
``torch._inductor.debug.dump_inductor_provenance_info`` (wrapped for the call),
``torch._dynamo.symbolic_convert.InstructionTranslator.current_tx`` (the frame's ``self``), ``GraphModuleSerializer``,
``torch.fx.Node._rename``.

Pre: ``fn(*args, **kwargs)`` runs (it is run once, for real: its side effects happen).
Post: ``(program JSON, CompileSummary)``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any, Optional

import torch

from tb_graph_plugin.torch.compile_places import (break_stack, class_of, events as run_events, frame_of,
                                                  frame_prefix, lifted, module_classes, module_path, stack_text,
                                                  up_to_forward)
from tb_graph_plugin.torch.compile_recorder import Recorder, aten, drop_pass_through, kernels as op_kernels

__all__ = ["CompileSummary", "compiled_program_json"]

@dataclasses.dataclass
class CompileSummary:
    graphs: int  # Dynamo graphs run, recompilations included
    graph_breaks: int
    recompilations: int  # graphs compiled again, within the call, for a frame it had compiled (guards failed)
    breaks: list  # [(reason, source)]
    kernels: int = 0  # Inductor kernels an op was mapped to


def compiled_program_json(fn, args: tuple, kwargs: dict, backend: Any = "inductor") -> tuple[dict, CompileSummary]:
    """Run ``fn`` once compiled and return its graphs as one program JSON (module docstring)."""
    import torch._inductor.config as inductor_config
    from torch._dynamo.utils import graph_break_reasons
    from torch._export.serde.serialize import GraphModuleSerializer, _to_json_bytes

    recorder = Recorder(backend)
    compiled = torch.compile(fn, backend=recorder)
    saved = list(graph_break_reasons)
    graph_break_reasons.clear()
    try:
        # provenance on (Inductor maps each kernel to the graph's nodes); no cache, which would skip it
        with inductor_config.patch({"trace.provenance_tracking_level": 1, "fx_graph_cache": False}):
            compiled(*args, **kwargs)
        reasons = list(graph_break_reasons)
    finally:
        graph_break_reasons[:] = saved
    if not recorder.graphs:
        raise RuntimeError("torch.compile handed no graph to the backend: nothing to trace in the call, or "
                           "Dynamo's recompile limit was reached for this code (torch._dynamo.config."
                           "recompile_limit; call torch._dynamo.reset() first)")
    root_class = type(fn).__qualname__ if isinstance(fn, torch.nn.Module) else getattr(fn, "__name__", "fn")
    root_module = f"{type(fn).__module__}.{root_class}" if isinstance(fn, torch.nn.Module) else root_class
    events = run_events(recorder, reasons)
    owned, modules = {}, {}
    if isinstance(fn, torch.nn.Module):
        owned = {id(t): n for n, t in list(fn.named_parameters()) + list(fn.named_buffers())}
        modules = {id(m): n for n, m in fn.named_modules()}
    classes = module_classes(fn)
    nodes, tensors, input_specs, outputs = [], {}, [], []
    seen_params: dict = {}
    kernel_names: set = set()
    breaks: list = []
    recompilations = 0
    frames: set = set()
    user_names: dict = {}  # id of an input tensor of the call -> its placeholder name
    input_names: set = set()
    produced: dict = {}  # id of a graph's output tensor -> (graph index, its tensor name)
    last_graph = -1
    pending: Optional[dict] = None  # the last break, whose outputs the next graph reads
    results: list = []  # the outputs of the last graph
    last_agm = None
    for position, (event, k, item) in enumerate(events):
        if event == "break":
            source, _file = frame_of(item)
            text = str(getattr(item, "reason", "")).strip().splitlines()[0] if getattr(item, "reason", "") else ""
            breaks.append((text, source))
            stack = break_stack(last_agm, item, classes, fn, root_module) or "L__self__,," + root_module
            inputs = ([{"as_tensor": {"name": f"break_out_{len(breaks) - 1}"}}] if pending is not None else results)
            if pending is not None:
                pending["outputs"] = inputs
            pending = {"target": "graph_break", "inputs": [{"name": f"in{i}", "arg": o} for i, o in enumerate(inputs)],
                       "outputs": [], "metadata": {
                           "nn_module_stack": stack, "stack_trace": stack_text(item),
                           "custom": json.dumps({"tb_graph_break": True, "tb_compiled_graph": k,
                                                 "reason": text, "source": source})}}
            nodes.append(pending)
            results = []
            continue
        gm, example_inputs, _reason, cid = item
        frame = getattr(cid, "frame_id", None)
        if frame is not None and frame in frames:
            recompilations += 1  # a frame compiled again within this call (its guards failed)
        frames.add(frame)
        for node in gm.graph.nodes:  # copied onto the aten ops made from it
            node.meta["custom"] = {**(node.meta.get("custom") or {}), "tb_dynamo_node": node.name}
        agm = aten(gm, example_inputs)
        found_kernels = op_kernels(agm, recorder.provenance[k] if k < len(recorder.provenance) else {})
        sources = [str(n.target) for n in gm.graph.nodes if n.op == "placeholder"]
        prefix = frame_prefix(sources, example_inputs, owned, classes, gm, modules.get(id(recorder.selves[k])))
        carried = []
        placeholders = [n for n in agm.graph.nodes if n.op == "placeholder"]
        for node, source, value in zip(placeholders, sources, example_inputs):
            kind, path = lifted(source)
            path = prefix + path
            if kind:
                new = ("p_" if kind == "parameters" else "b_") + re.sub(r"\W", "_", path)
                node._rename(new)
                if new not in seen_params:
                    seen_params[new] = path
                    spec = {"arg": {"name": node.name}}
                    input_specs.append({"parameter": {**spec, "parameter_name": path}} if kind == "parameters"
                                       else {"buffer": {**spec, "buffer_name": path, "persistent": True}})
                continue
            # where the value came from, by identity (the example inputs are the call's tensors)
            vid = id(value) if isinstance(value, torch.Tensor) else None
            if vid is not None and vid in user_names:  # an input of the call, read again
                node._rename(user_names[vid])
                continue
            if vid is not None and vid in produced and not (pending is not None and produced[vid][0] == last_graph):
                node._rename(produced[vid][1])  # an earlier graph's output: read from its op
                continue
            if pending is not None:  # made by the graph the break ended, or by the Python between
                node._rename(f"g{k}_{node.name}")
                carried.append(node.name)
                continue
            local = re.match(r"^L_(\w+?)_$", source)
            node._rename(local.group(1) if local and local.group(1) not in input_names else f"g{k}_{node.name}")
            if vid is None:
                continue  # a symbolic size: no input node
            input_names.add(node.name)
            user_names[vid] = node.name
            input_specs.append({"user_input": {"arg": {"as_tensor": {"name": node.name}}}})
        for node in agm.graph.nodes:
            if node.op in ("placeholder", "output"):
                continue
            node._rename(f"g{k}_{node.name}")
            stack = {"L__self__": ("", root_module)}
            levels = prefix[:-1].split(".") if prefix else []
            for i in range(len(levels)):  # the modules above the frame's own (``inner`` of a nested frame)
                path = ".".join(levels[:i + 1])
                stack["L__self__" + path] = (path, class_of(fn, path))
            for key, (path, cls) in (node.meta.get("nn_module_stack") or {}).items():
                qual = f"{cls.__module__}.{cls.__qualname__}" if isinstance(cls, type) else str(cls)
                stack[key] = (prefix + module_path(str(path)) if module_path(str(path)) else prefix[:-1], qual)
            node.meta["nn_module_stack"] = stack
            node.meta["stack_trace"] = up_to_forward(node.meta.get("stack_trace"))
            node.meta["custom"] = {"tb_compiled_graph": k, **({"tb_kernel": found_kernels[node]} if node in found_kernels else {})}
        drop_pass_through(agm)
        agm.recompile()
        graph = json.loads(_to_json_bytes(GraphModuleSerializer(None, []).serialize_graph(agm)))
        if pending is not None:
            pending["outputs"] = [{"as_tensor": {"name": c}} for c in carried] or \
                [{"as_tensor": {"name": f"break_out_{len(breaks) - 1}"}}]
            pending = None
        kernel_names.update((k, v) for v in found_kernels.values())
        nodes.extend(graph["nodes"])
        tensors.update(graph.get("tensor_values") or {})
        results = list(graph.get("outputs") or [])
        for out_value, out_arg in zip(recorder.outputs.get(k, []), results):
            if isinstance(out_value, torch.Tensor) and isinstance(out_arg, dict) and "as_tensor" in out_arg:
                produced.setdefault(id(out_value), (k, out_arg["as_tensor"]["name"]))
        last_agm = agm
        last_graph = k
        if position + 1 == len(events):  # the last graph's outputs are the call's (earlier ones flow on)
            outputs.extend(results)
    if pending is not None and not pending["outputs"]:
        pending["outputs"] = [{"as_tensor": {"name": f"break_out_{len(breaks)}"}}]
    output_specs = [{"user_output": {"arg": o}} for o in outputs if isinstance(o, dict) and "as_tensor" in o]
    program = {"graph_module": {"graph": {"nodes": nodes, "tensor_values": tensors, "inputs": [], "outputs": outputs},
                                "signature": {"input_specs": input_specs, "output_specs": output_specs},
                                "module_call_graph": []}}
    summary = CompileSummary(graphs=len(recorder.graphs), graph_breaks=len(breaks), recompilations=recompilations,
                             breaks=breaks, kernels=len(kernel_names))
    return program, summary
