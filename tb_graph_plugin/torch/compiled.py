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
   whose frame traced nothing before it (no graph of its own) is drawn too (``_events``);
   a nested module's frame (Dynamo compiles it as its own frame, ``self`` its root) is placed
   by its ``self``, its lifted parameters' paths in the model, or the ``forward`` holding its
   lines (``_prefix``); a graph's input that is an input of the call or an earlier graph's
   output (by identity: the recorder wraps each compiled graph and keeps its outputs of the
   call) reads that input node or op; the kernel of each op from Inductor's provenance mapping
   (``_kernels``);
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
import warnings
from typing import Any, Callable, Optional

import torch

__all__ = ["CompileSummary", "compiled_program_json"]

_SOURCE_ATTR = re.compile(r"\._(?:modules|parameters|buffers)\['([^']*)'\]|\.(\w+)|\[(\d+)\]|\['([^']*)'\]")


@dataclasses.dataclass
class CompileSummary:
    graphs: int  # Dynamo graphs run, recompilations included
    graph_breaks: int
    recompilations: int  # graphs compiled again, within the call, for a frame it had compiled (guards failed)
    breaks: list  # [(reason, source)]
    kernels: int = 0  # Inductor kernels an op was mapped to


def _module_path(source: str) -> str:
    """``L['self'].layers[0]._modules['fc']`` -> ``layers.0.fc`` (Dynamo's source names).

    >>> _module_path("L['self'].layers[0].self_attn"), _module_path("L['s']._modules['a']._parameters['weight']")
    ('layers.0.self_attn', 'a.weight')
    """
    m = re.match(r"^[LG]\['[^']*'\](?:\[\d+\])*", source)
    rest = source[m.end():] if m else source
    parts = []
    for match in _SOURCE_ATTR.finditer(rest):
        parts.append(next(g for g in match.groups() if g is not None))
    return ".".join(parts)


def _lifted(placeholder: str) -> tuple[str, str]:
    """(``parameters`` / ``buffers`` / "", path) of a Dynamo placeholder's name.

    >>> _lifted("L_self_modules_layers_modules_0_modules_self_attn_modules_q_proj_parameters_weight_")
    ('parameters', 'layers.0.self_attn.q_proj.weight')
    >>> _lifted("L_x_")
    ('', '')
    """
    parts = re.split(r"_(modules|parameters|buffers)_", placeholder)
    if len(parts) < 3 or parts[-2] not in ("parameters", "buffers"):
        return "", ""
    names = [parts[i + 1] for i in range(1, len(parts) - 1, 2)]
    names[-1] = names[-1][:-1] if names[-1].endswith("_") else names[-1]
    return parts[-2], ".".join(names)


def _frame_self():
    """The ``self`` of the frame Dynamo is compiling (a nested module's own frame), else None."""
    try:
        from torch._dynamo.symbolic_convert import InstructionTranslator

        tx = InstructionTranslator.current_tx()
        local = dict(tx.f_locals) if tx is not None else {}
    except Exception:  # noqa: BLE001 - a better name only
        return None
    value = local.get("self")
    return value if isinstance(value, torch.nn.Module) else None


class _Recorder:
    def __init__(self, backend):
        self.backend = backend
        self.graphs: list = []  # (gm, example_inputs, reason, compile id)
        self.seen: list = []  # per graph: how many break reasons Dynamo had recorded when it compiled
        self.provenance: list = []  # per graph: Inductor's {"preToPost", "postToCppCode", ...} or {}
        self.selves: list = []  # per graph: its frame's ``self`` (a module), or None
        self.outputs: dict = {}  # graph index -> its outputs' values (references: ids stay theirs)


    def __call__(self, gm, example_inputs):
        from torch._guards import CompileContext

        try:
            cid = CompileContext.current_compile_id()
        except Exception:  # noqa: BLE001 - an id is extra
            cid = None
        from torch._dynamo.utils import graph_break_reasons

        self.graphs.append((gm, list(example_inputs), getattr(gm, "compile_subgraph_reason", None), cid))
        self.seen.append(len(graph_break_reasons))
        self.selves.append(_frame_self())
        inner = self.backend
        if isinstance(inner, str):
            inner = torch._dynamo.lookup_backend(inner)
        self.provenance.append({})
        slot = self.provenance[-1]
        import torch._inductor.debug as inductor_debug

        dump = inductor_debug.dump_inductor_provenance_info

        def keep():  # Inductor's provenance mapping of this graph (its tlparse artifact)
            mapping = dump()
            slot.update(mapping if isinstance(mapping, dict) else {})
            return mapping

        inductor_debug.dump_inductor_provenance_info = keep
        try:
            compiled = inner(gm, example_inputs)
        finally:
            inductor_debug.dump_inductor_provenance_info = dump
        k = len(self.graphs) - 1

        def run(*args):  # the graph's outputs of its first run, kept: a later graph's inputs are found among them
            out = compiled(*args)
            if k not in self.outputs:
                self.outputs[k] = list(out) if isinstance(out, (list, tuple)) else [out]
            return out

        return run


def _aten(gm, example_inputs):
    """The Dynamo graph lowered to aten ops, each keeping its Dynamo node's meta."""
    from torch._guards import detect_fake_mode
    from torch.fx.experimental.proxy_tensor import make_fx
    import torch.fx.traceback as fx_traceback

    def run(*inputs):
        with fx_traceback.preserve_node_meta():
            return torch.fx.Interpreter(gm).run(*inputs)

    fake_mode = detect_fake_mode(example_inputs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if fake_mode is not None:
            with fake_mode:
                return make_fx(run, tracing_mode="real")(*example_inputs)
        return make_fx(run, tracing_mode="fake")(*example_inputs)


def _frame_of(reason) -> tuple[str, str]:
    """(``file.py:7 in forward``, the file) of the innermost user frame of a break."""
    stack = list(getattr(reason, "user_stack", None) or [])
    if not stack:
        return "", ""
    f = stack[-1]
    short = f.filename.rsplit("site-packages/", 1)[-1]
    return f"{short}:{f.lineno} in {f.name}", f.filename


def compiled_program_json(fn, args: tuple, kwargs: dict, backend: Any = "inductor") -> tuple[dict, CompileSummary]:
    """Run ``fn`` once compiled and return its graphs as one program JSON (module docstring)."""
    import torch._inductor.config as inductor_config
    from torch._dynamo.utils import graph_break_reasons
    from torch._export.serde.serialize import GraphModuleSerializer, _to_json_bytes

    recorder = _Recorder(backend)
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
    events = _events(recorder, reasons)
    owned, modules = {}, {}
    if isinstance(fn, torch.nn.Module):
        owned = {id(t): n for n, t in list(fn.named_parameters()) + list(fn.named_buffers())}
        modules = {id(m): n for n, m in fn.named_modules()}
    classes = _module_classes(fn)
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
    for kind, k, item in events:
        if kind == "break":
            source, _file = _frame_of(item)
            text = str(getattr(item, "reason", "")).strip().splitlines()[0] if getattr(item, "reason", "") else ""
            breaks.append((text, source))
            stack = (_break_stack(last_agm, item) if last_agm is not None else "") or "L__self__,," + root_module
            inputs = ([{"as_tensor": {"name": f"break_out_{len(breaks) - 1}"}}] if pending is not None else results)
            if pending is not None:
                pending["outputs"] = inputs
            pending = {"target": "graph_break", "inputs": [{"name": f"in{i}", "arg": o} for i, o in enumerate(inputs)],
                       "outputs": [], "metadata": {
                           "nn_module_stack": stack, "stack_trace": _stack_text(item),
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
        agm = _aten(gm, example_inputs)
        kernels = _kernels(agm, recorder.provenance[k] if k < len(recorder.provenance) else {})
        sources = [str(n.target) for n in gm.graph.nodes if n.op == "placeholder"]
        prefix = _prefix(sources, example_inputs, owned, classes, gm, modules.get(id(recorder.selves[k])))
        carried = []
        placeholders = [n for n in agm.graph.nodes if n.op == "placeholder"]
        for node, source, value in zip(placeholders, sources, example_inputs):
            lifted, path = _lifted(source)
            path = prefix + path
            if lifted:
                new = ("p_" if lifted == "parameters" else "b_") + re.sub(r"\W", "_", path)
                node._rename(new)
                if new not in seen_params:
                    seen_params[new] = path
                    spec = {"arg": {"name": node.name}}
                    input_specs.append({"parameter": {**spec, "parameter_name": path}} if lifted == "parameters"
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
                stack["L__self__" + path] = (path, _class_of(fn, path))
            for key, (path, cls) in (node.meta.get("nn_module_stack") or {}).items():
                qual = f"{cls.__module__}.{cls.__qualname__}" if isinstance(cls, type) else str(cls)
                stack[key] = (prefix + _module_path(str(path)) if _module_path(str(path)) else prefix[:-1], qual)
            node.meta["nn_module_stack"] = stack
            node.meta["custom"] = {"tb_compiled_graph": k, **({"tb_kernel": kernels[node]} if node in kernels else {})}
        _drop_pass_through(agm)
        agm.recompile()
        graph = json.loads(_to_json_bytes(GraphModuleSerializer(None, []).serialize_graph(agm)))
        if pending is not None:
            pending["outputs"] = [{"as_tensor": {"name": c}} for c in carried] or \
                [{"as_tensor": {"name": f"break_out_{len(breaks) - 1}"}}]
            pending = None
        kernel_names.update((k, v) for v in kernels.values())
        nodes.extend(graph["nodes"])
        tensors.update(graph.get("tensor_values") or {})
        results = list(graph.get("outputs") or [])
        for out_value, out_arg in zip(recorder.outputs.get(k, []), results):
            if isinstance(out_value, torch.Tensor) and isinstance(out_arg, dict) and "as_tensor" in out_arg:
                produced.setdefault(id(out_value), (k, out_arg["as_tensor"]["name"]))
        last_agm = agm
        last_graph = k
        if not events[events.index((kind, k, item)) + 1:] or events[events.index((kind, k, item)) + 1][0] != "break":
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


def _class_of(fn, path: str) -> str:
    try:
        module = fn.get_submodule(path)
    except (AttributeError, TypeError):
        return "torch.nn.Module"
    return f"{type(module).__module__}.{type(module).__qualname__}"


def _prefix(sources: list, example_inputs: list, owned: dict, classes: dict, gm, own: Optional[str]) -> str:
    """The path (``inner.``) of the module a Dynamo frame's ``self`` is within the compiled
    module: ``own`` (the frame's ``self`` found among the model's modules), else a lifted
    parameter's path in the frame (``fc.weight``) against its path in the model
    (``inner.fc.weight``), else the module whose ``forward`` holds the frame's source lines (a
    resumed frame, ``torch_dynamo_resume_in_forward_at_31``, keeps no ``self``): the instance
    last seen of that class, or its one instance. ``classes`` (class -> [(path, forward's
    file, first line, last line)], and the last prefix seen per class) is shared across frames."""
    found = (own + "." if own else "") if own is not None else None
    if found is None:
        for source, value in zip(sources, example_inputs):
            kind, rel = _lifted(source)
            full = owned.get(id(value)) if kind else None
            if full and full.endswith(rel):
                found = full[:len(full) - len(rel)]
                break
    where = None
    for node in gm.graph.nodes:
        frames = re.findall(r'File "([^"]*)", line (\d+), in (\S+)', node.meta.get("stack_trace") or "")
        if frames:
            where = (frames[-1][0], int(frames[-1][1]))
            break
    owners = [cls for cls, spans in classes.get("spans", {}).items()
              if where and any(f == where[0] and lo <= where[1] <= hi for f, lo, hi in spans)]
    if found is not None:
        for cls in owners:
            classes.setdefault("last", {})[cls] = found
        return found
    for cls in owners:
        if cls in classes.get("last", {}):
            return classes["last"][cls]
        paths = classes["paths"].get(cls, [])
        if len(paths) == 1:
            return paths[0] + "." if paths[0] else ""
    return ""


def _module_classes(fn) -> dict:
    """For :func:`_prefix`: each module class of ``fn`` -> the span of lines of its ``forward``,
    and its instances' paths."""
    import inspect

    spans: dict = {}
    paths: dict = {}
    if isinstance(fn, torch.nn.Module):
        for path, module in fn.named_modules():
            cls = type(module)
            paths.setdefault(cls, []).append(path)
            if cls in spans:
                continue
            try:
                lines, first = inspect.getsourcelines(cls.forward)
                spans[cls] = [(inspect.getsourcefile(cls.forward), first, first + len(lines) - 1)]
            except (OSError, TypeError):
                spans[cls] = []
    return {"spans": spans, "paths": paths, "last": {}}


def _events(recorder, reasons: list) -> list:
    """Graphs and breaks in run order: ``[("graph", k, recorded), ("break", k, reason)]``.

    A break that ended a graph follows it; a break with no graph of its own (nothing traced
    before it in its frame) sits before the first graph compiled after it (``recorder.seen``:
    how many break reasons existed when each graph was compiled). A break seen again from an
    outer frame (same innermost source line) counts once."""
    own = {id(r[2]): k for k, r in enumerate(recorder.graphs) if r[2] is not None}
    distinct, lines = [], set()
    for j, r in enumerate(reasons):
        stack = list(getattr(r, "user_stack", None) or [])
        line = (stack[-1].filename, stack[-1].lineno, stack[-1].name) if stack else None
        if id(r) not in own and line in lines:
            continue
        if id(r) not in own and any(id(o) in own and _line(o) == line for o in reasons[j + 1:]):
            continue  # seen from the outer frame first; the inner frame's graph owns it
        lines.add(line)
        distinct.append((j, r))
    events = []
    for k, recorded in enumerate(recorder.graphs):
        for j, r in distinct:
            if id(r) not in own and j < recorder.seen[k] and not any(e[2] is r for e in events):
                events.append(("break", k, r))
        events.append(("graph", k, recorded))
        for j, r in distinct:
            if own.get(id(r)) == k:
                events.append(("break", k, r))
    for j, r in distinct:
        if not any(e[2] is r for e in events):
            events.append(("break", len(recorder.graphs), r))
    return events


def _line(reason):
    stack = list(getattr(reason, "user_stack", None) or [])
    return (stack[-1].filename, stack[-1].lineno, stack[-1].name) if stack else None


def _stack_text(reason) -> str:
    stack = list(getattr(reason, "user_stack", None) or [])
    return "\n".join(f'  File "{f.filename}", line {f.lineno}, in {f.name}\n    {(f.line or "").strip()}' for f in stack)


def _break_stack(agm, reason) -> str:
    """The serialized ``nn_module_stack`` of the last op before the break on the break's file and
    function (the module call whose forward broke), else ""."""
    stack = list(getattr(reason, "user_stack", None) or [])
    if not stack:
        return ""
    f = stack[-1]
    best = None
    for node in agm.graph.nodes:
        trace = node.meta.get("stack_trace") or ""
        frames = re.findall(r'File "([^"]*)", line (\d+), in (\S+)', trace)
        if frames and frames[-1][0] == f.filename and frames[-1][2] == f.name and int(frames[-1][1]) <= f.lineno:
            best = node
    if best is None:
        return ""
    return ";".join(f"{k},{p},{c}" for k, (p, c) in best.meta["nn_module_stack"].items())


def _drop_pass_through(agm) -> None:
    """``detach`` / ``alias`` ops (autograd's bookkeeping) are not drawn: their readers read their input."""
    for node in list(agm.graph.nodes):
        if node.op == "call_function" and str(node.target) in ("aten.detach.default", "aten.alias.default") \
                and node.args and isinstance(node.args[0], torch.fx.Node):
            node.replace_all_uses_with(node.args[0])
            agm.graph.erase_node(node)


def _kernels(agm, provenance: dict) -> dict:
    """aten op -> the Inductor kernel it went into (``cpp_fused_add_mul_relu_0``,
    ``extern_kernels.addmm``), from Inductor's provenance mapping: the Dynamo node an op came
    from -> its post-grad nodes -> their kernels: the post-grad node named as the op, else the one
    kernel they all went into (a decomposed op); views and ops Inductor made no kernel for get none."""
    pre_to_post = provenance.get("preToPost") or {}
    post_to_kernel = provenance.get("postToCppCode") or provenance.get("postToTritonKernel") or {}
    out = {}
    for node in agm.graph.nodes:
        if node.op != "call_function":
            continue
        dynamo = (node.meta.get("custom") or {}).get("tb_dynamo_node")
        posts = [p for p in pre_to_post.get(dynamo, []) if post_to_kernel.get(p)]
        if not posts:
            continue
        op = getattr(node.target, "__name__", str(node.target)).split(".")[0]
        named = [p for p in posts if re.sub(r"_\d+$", "", p) == op]
        kernels = {post_to_kernel[p][0] for p in posts}
        if named:
            kernel = post_to_kernel[named[0]][0]
        elif len(kernels) == 1:  # decomposed (silu -> sigmoid, mul), all in one kernel
            kernel = next(iter(kernels))
        else:
            continue  # one of several ops the node became, in different kernels: not told which
        out[node] = kernel.rsplit(":", 1)[0]
    return out
