"""Record what ``torch.compile`` hands its backend during one call (``compiled.py``, steps 1-2).

``Recorder`` is the backend: per Dynamo graph it keeps the ``GraphModule``, its example inputs
(the call's own tensors), the reason the graph ended, the compile id, the frame's ``self``,
Inductor's provenance mapping (kernel -> post-grad nodes -> Dynamo nodes) and, wrapping the
compiled graph, its outputs of the call. ``aten`` lowers a recorded graph to aten ops keeping
each Dynamo node's meta; ``kernels`` reads each aten op's kernel from the provenance mapping.

Private torch APIs: ``torch._guards.CompileContext``, ``torch._guards.detect_fake_mode``,
``torch._dynamo.lookup_backend``, ``torch._dynamo.utils.graph_break_reasons``,
``torch._inductor.debug.dump_inductor_provenance_info`` (wrapped for the call),
``torch._dynamo.symbolic_convert.InstructionTranslator.current_tx``.
"""

from __future__ import annotations

import re
import warnings

import torch

__all__ = ["Recorder", "aten", "drop_pass_through", "kernels"]


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


class Recorder:
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


def aten(gm, example_inputs):
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


def drop_pass_through(agm) -> None:
    """``detach`` / ``alias`` ops (autograd's bookkeeping) are not drawn: their readers read their input."""
    for node in list(agm.graph.nodes):
        if node.op == "call_function" and str(node.target) in ("aten.detach.default", "aten.alias.default") \
                and node.args and isinstance(node.args[0], torch.fx.Node):
            node.replace_all_uses_with(node.args[0])
            agm.graph.erase_node(node)


def kernels(agm, provenance: dict) -> dict:
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
