"""Names for a JAX program's ops: module scopes from the name stack, backward and optimizer apart.

Used by ``ingest/jax_program.py`` (a ``JaxProgram`` read from a jaxpr by ``tb_graph_plugin.jax``,
or from StableHLO text by ``ingest/stablehlo.py``). Four steps, in order:

1. ``scopes``: each op's scope segments -> components. A name-stack segment
   (``transpose(jvp(Model))/block_0/Dense_0``) is split at ``/``; a component wrapped in a
   transformation (``jvp(...)``, ``transpose(...)``, ``vmap(...)``, ``remat(...)``...) is
   unwrapped (``jvp()`` leaves nothing); a sub-program segment (``scan ×24``, ``jit(gelu)``,
   ``cond/branch_1``) is kept as it is. An op with a ``transpose`` frame is backward.
2. ``phases``: with any backward op, an op in no transformation frame that is not upstream
   of the forward or backward (input preprocessing stays) and is downstream of the backward,
   feeds such an op (an optimizer's step count) or reads only optimizer ops' outputs, is an
   optimizer op.
3. ``attribution``: an optimizer op reads, through other optimizer ops, inputs that name one
   parameter (the parameter itself, or an optimizer state leaf whose path ends in the
   parameter's: ``opt_state/0/mu/params/block_0/Dense_0/kernel``): it is placed under
   ``optimizer/`` + that parameter's path; one that reads none takes its consumers' parameter
   when they share one (the gradient's scaling before the moment update); one that reads
   several (the step count, shared terms) stays under ``optimizer/``.
4. ``leaves``: scope = ``backward/`` + components for backward ops, ``optimizer/...`` for
   optimizer ops, else the components (``loss`` for a differentiated op in no module: the
   loss function around the model); the op is named after its primitive (``dot_general``,
   ``dot_general_1`` in its scope).

This is the PyTorch training step's layout (``ingest/torch_scopes.py`` names the forward); the
name stacks are JAX's (``jax._src.source_info_util.NameStack``: ``transform_name(inner)``).

Pre: ops in program order, each read value produced before (or a program input). Post: every
op, input and output has a distinct name; no name is also a scope of another name.
"""

from __future__ import annotations

import re
from typing import Optional

__all__ = ["TRANSFORMS", "unwrap", "scope_components", "name_program", "BACKWARD", "OPTIMIZER"]

BACKWARD = "backward"
OPTIMIZER = "optimizer"
LOSS = "loss"  # the differentiated function's ops outside any module (jvp() frames only)
# Name-stack transformation frames (jax: ad.jvp "jvp", ad.transpose "transpose", batching "vmap",
# checkpoint "remat" / "checkpoint"). A nested ``jit(<fn>)`` is a sub-program (a group), not one.
TRANSFORMS = frozenset({"jvp", "transpose", "vmap", "pmap", "xmap", "remat", "checkpoint",
                        "linearize", "vjp", "shard_map"})
_WRAPPED = re.compile(r"^([A-Za-z_][\w]*)\((.*)\)$", re.S)


def unwrap(component: str) -> tuple[str, list[str]]:
    """``transpose(jvp(Model))`` -> ``("Model", ["transpose", "jvp"])``; a component not wrapped
    in a transformation is returned as it is.

    >>> unwrap("transpose(jvp(Model))"), unwrap("jvp()"), unwrap("Dense_0")
    (('Model', ['transpose', 'jvp']), ('', ['jvp']), ('Dense_0', []))
    """
    frames = []
    while True:
        m = _WRAPPED.match(component)
        if not m or m.group(1) not in TRANSFORMS:
            return component, frames
        frames.append(m.group(1))
        component = m.group(2)


def _clean(text: str) -> str:
    return text.replace("/", "_").strip() or "_"


def scope_components(segments) -> tuple[list[str], set[str], bool]:
    """(components, transformation frames met, whether the first component is a sub-program)
    of an op's scope segments: ``(kind, text)`` with kind ``"stack"`` (a name stack, split at
    ``/`` and unwrapped) or ``"group"`` (kept whole).

    A component repeating the one before it in the same name stack is dropped: Flax linen
    pushes a module's name again when its ``__call__`` calls ``super().__call__``
    (``SelfAttention_0/SelfAttention_0/query`` is ``SelfAttention_0/query``).

    >>> parts, frames, lead = scope_components([("stack", "transpose(jvp(M))/b_0"), ("group", "scan ×3"),
    ...                                         ("stack", "Dense_0")])
    >>> parts, sorted(frames), lead
    (['M', 'b_0', 'scan ×3', 'Dense_0'], ['jvp', 'transpose'], False)
    >>> scope_components([("stack", "M/SelfAttention_0/SelfAttention_0/query")])[0]
    ['M', 'SelfAttention_0', 'query']
    """
    out: list[str] = []
    frames: set[str] = set()
    lead_group = False
    for kind, text in segments:
        if kind == "group":
            lead_group = lead_group or not out
            out.append(_clean(text))
            continue
        previous = None
        for part in text.split("/"):
            inner, met = unwrap(part)
            frames.update(met)
            for p in inner.split("/") if inner else ():
                if p and p != previous:  # linen pushes a module's name again for super().__call__
                    out.append(_clean(p))
                previous = p or previous
    return out, frames, lead_group


def _param_index(params: list[tuple]) -> dict[tuple, tuple]:
    """path suffix -> parameter path, for the attribution of optimizer state leaves: each
    parameter's whole path, and without its collection (``params``) when that is unique."""
    index: dict[tuple, tuple] = {}
    for path in params:
        index.setdefault(path, path)
        if len(path) > 1:
            index.setdefault(path[1:], path)
    return index


def _attributed(path: tuple, index: dict, is_param: bool) -> Optional[tuple]:
    if is_param:
        return path
    for j in range(1, len(path)):
        hit = index.get(path[j:])
        if hit is not None:
            return hit
    return None


def name_program(program) -> tuple[list[str], list[str], list[str]]:
    """(name per input, name per op, name per output) of a ``jax_program.JaxProgram``: the
    module docstring's four steps."""
    ops = program.ops
    comps, backward, framed = _scopes(ops)  # 1
    producer: dict[str, int] = {}
    for i, op in enumerate(ops):
        for v in op.outputs:
            producer.setdefault(v, i)
    optimizer = _optimizer_ops(ops, producer, backward, framed) if any(backward) else set()  # 2
    owner = _attribution(ops, program.inputs, producer, optimizer)  # 3
    scope_of = []  # 4
    for i in range(len(ops)):
        if i in optimizer:
            scope_of.append("/".join([OPTIMIZER] + list(owner[i] or ())))
        else:
            scope_of.append("/".join(([BACKWARD] if backward[i] else []) + comps[i]))
    return _unique_names(program, scope_of)


def _scopes(ops) -> tuple[list, list, list]:
    """Step 1: (components, is backward, is differentiated) per op."""
    comps, backward, framed = [], [], []
    for op in ops:
        c, frames, lead_group = scope_components(op.scope)
        differentiated = bool(frames & {"jvp", "transpose", "linearize", "vjp"})
        if differentiated and (not c or lead_group):
            c = [LOSS] + c  # the loss function around the model (no module scope)
        comps.append(c)
        backward.append("transpose" in frames)
        framed.append(differentiated)
    return comps, backward, framed


def _attribution(ops, inputs, producer: dict, optimizer: set) -> dict:
    """Step 3: optimizer op -> the one parameter path it updates, else None."""
    index = _param_index([inp.path for inp in inputs if inp.role == "param"])
    source: dict[str, Optional[frozenset]] = {}
    for inp in inputs:
        hit = _attributed(inp.path, index, inp.role == "param")
        source[inp.value] = frozenset([hit]) if hit else None
    owner: dict[int, Optional[tuple]] = {}  # () while it reads no parameter at all
    for i in sorted(optimizer):
        seen: set = set()
        for v in ops[i].inputs:
            seen |= source.get(v) or set()
        for v in ops[i].outputs:
            source[v] = frozenset(seen) if seen else None
        owner[i] = next(iter(seen)) if len(seen) == 1 else (None if seen else ())
    # an op that reads no parameter (a gradient's scaling) takes the one of all its consumers
    consumers: dict[int, set] = {}
    for i in sorted(optimizer):
        for v in ops[i].inputs:
            j = producer.get(v)
            if j in optimizer and j != i:
                consumers.setdefault(j, set()).add(i)
    for i in sorted(optimizer, reverse=True):
        if owner[i] == ():
            hits = {owner[c] for c in consumers.get(i, ())}
            owner[i] = next(iter(hits)) if len(hits) == 1 and None not in hits and () not in hits else None
    return owner


def _optimizer_ops(ops, producer: dict, backward: list, framed: list) -> set[int]:
    """Step 2 of the module docstring."""
    n = len(ops)
    upstream = [False] * n  # feeds (transitively) a framed op
    for i in range(n - 1, -1, -1):
        if framed[i] or upstream[i]:
            for v in ops[i].inputs:
                j = producer.get(v)
                if j is not None and j < i:
                    upstream[j] = True
    after_backward = [False] * n
    for i, op in enumerate(ops):
        if backward[i]:
            after_backward[i] = True
            continue
        after_backward[i] = any(after_backward[j] for j in (producer.get(v) for v in op.inputs) if j is not None and j < i)
    candidate = [not framed[i] and not upstream[i] for i in range(n)]
    opt = {i for i in range(n) if candidate[i] and after_backward[i]}
    for i in range(n - 1, -1, -1):  # ops feeding an optimizer op (a step count, a schedule)
        if i in opt:
            for v in ops[i].inputs:
                j = producer.get(v)
                if j is not None and j < i and candidate[j]:
                    opt.add(j)
    for i in range(n):  # and the ops reading only what the optimizer made (the new count's cast)
        if candidate[i] and i not in opt:
            sources = [producer.get(v) for v in ops[i].inputs]
            if sources and all(j in opt for j in sources if j is not None) and any(j is not None for j in sources):
                opt.add(i)
    return opt


def _unique_names(program, scope_of: list[str]) -> tuple[list[str], list[str], list[str]]:
    taken: set[str] = set()
    scopes = set(scope_of)
    for inp in program.inputs:
        scopes.add("/".join(_input_parts(inp)[:-1]))
    for _, path in program.outputs:
        if path:
            scopes.add("/".join(["output"] + [_clean(str(p)) for p in path][:-1]))
    for scope in scopes:
        parts = scope.split("/") if scope else []
        taken.update("/".join(parts[:k]) for k in range(1, len(parts) + 1))
    counters: dict[tuple[str, str], int] = {}

    def unique(scope: str, leaf: str, numbered: bool) -> str:
        leaf = _clean(leaf)
        while True:
            k = counters.get((scope, leaf), 0)
            counters[(scope, leaf)] = k + 1
            base = f"{scope}/{leaf}" if scope else leaf
            name = base + (f"_{k}" if k else "") if numbered or k else base
            if name not in taken:
                taken.add(name)
                return name

    in_names = []
    for inp in program.inputs:
        parts = _input_parts(inp)
        in_names.append(unique("/".join(parts[:-1]), parts[-1], False))
    op_names = [unique(scope_of[i], op.op, True) for i, op in enumerate(program.ops)]
    out_names = []
    for _, path in program.outputs:
        parts = ["output"] + [_clean(str(p)) for p in path]
        out_names.append(unique("/".join(parts[:-1]), parts[-1], False) if len(parts) > 1
                         else unique("", "output", True))
    return in_names, op_names, out_names


def _input_parts(inp) -> list[str]:
    """A parameter by its path (``params/block_0/Dense_0/kernel``), any other input
    ``input/<path>`` (as PyTorch inputs ``input/<arg>``)."""
    parts = [_clean(str(p)) for p in inp.path] or ["input"]
    return parts if inp.role == "param" else ["input"] + parts
