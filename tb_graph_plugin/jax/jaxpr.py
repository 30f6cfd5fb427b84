"""A traced jaxpr -> ``ingest.jax_program.JaxProgram``: the part of the JAX front end that reads jax.

Each equation becomes a ``JaxOp`` whose scope is the name stacks of the equations that hold it
(a sub-jaxpr's name stacks are relative to its equation's) and the sub-programs it sits in:

==========================================  ==================================================
equation                                    its sub-jaxprs become
==========================================  ==================================================
``scan``                                    a group ``scan ×<length>`` (the body once), then
                                            one op ``scan`` reading the body's outputs
``while``                                   ``while/cond`` and ``while/body``, then ``while``
``cond``                                    ``cond/branch_K``, then ``cond`` (the index and
                                            every branch's outputs)
``jit`` / ``pjit``                          ``jit(<name>)``, inlined (outputs bound through)
``remat`` / ``checkpoint``                  ``checkpoint`` (the name JAX's lowering gives it), inlined
``custom_jvp_call`` / ``custom_vjp_call``   ``custom_jvp(<name>)`` / ``custom_vjp(<name>)``
``closed_call``, ``core_call``              ``call``, inlined
==========================================  ==================================================

A jaxpr that is one ``jit`` equation (a jitted step traced whole) is read as its body.
Literals are not values (no edge); ``DropVar`` outputs are left out.

Pre: a ``ClosedJaxpr`` (``jax.make_jaxpr``), input and output pytree paths aligned with its
``in_avals`` / ``out_avals``. Post: a ``JaxProgram`` with every op input a program input or an
earlier op's output.
"""

from __future__ import annotations

import linecache
from typing import Optional

import numpy as np
from jax.extend import core as jcore

from tb_graph_plugin.ingest.jax_program import JaxInput, JaxOp, JaxProgram

__all__ = ["read_jaxpr"]

_CALLS = {"jit": "jit", "pjit": "jit", "closed_call": "call", "core_call": "call", "remat": "checkpoint",
          "remat2": "checkpoint", "checkpoint": "checkpoint", "custom_jvp_call": "custom_jvp",
          "custom_vjp_call": "custom_vjp", "custom_vjp_call_jaxpr": "custom_vjp", "custom_lin": "custom_lin"}
_SUB_KEYS = ("jaxpr", "call_jaxpr", "fun_jaxpr")
_SKIPPED_PARAMS = frozenset({"sharding", "out_sharding", "in_shardings", "out_shardings", "in_layouts",
                             "out_layouts", "donated_invars", "ctx_mesh", "compiler_options_kvs",
                             "resource_env", "keep_unused", "inline", "jvp_jaxpr_fun", "jvp_jaxpr_thunk",
                             "fwd_jaxpr_thunk", "bwd", "out_trees", "symbolic_zeros", "jaxpr", "call_jaxpr",
                             "fun_jaxpr", "branches", "cond_jaxpr", "body_jaxpr", "linear", "unroll",
                             "_split_transpose", "policy", "prevent_cse", "differentiated"})


def _jaxpr_of(value):
    """(Jaxpr, consts) of a ClosedJaxpr / Jaxpr param, else None."""
    if isinstance(value, jcore.ClosedJaxpr):
        return value.jaxpr, value.consts
    if isinstance(value, jcore.Jaxpr):
        return value, []
    return None


class _Reader:
    """Walks a jaxpr; ``env`` maps a var (by id, per walk of a jaxpr: a jaxpr inlined twice gets
    fresh values) to its value id."""

    def __init__(self):
        self.count = 0
        self.keep: list = []  # the vars keyed by id, kept alive while reading
        self.ops: list[JaxOp] = []
        self.consts: list[JaxInput] = []

    def value(self, var, env: dict) -> Optional[str]:
        if isinstance(var, jcore.Literal) or type(var).__name__ == "DropVar":
            return None
        key = id(var)
        if key not in env:
            env[key] = f"v{self.count}"
            self.count += 1
            self.keep.append(var)
        return env[key]

    def bind(self, jaxpr, consts, ins: list) -> dict:
        """A new env for a walk of ``jaxpr``: its invars read ``ins`` (value ids at the call
        site), its constvars constants (inputs of the program)."""
        env: dict = {}
        for var, val in zip(jaxpr.invars, ins):
            if val is not None:
                env[id(var)] = val
                self.keep.append(var)
        for var, c in zip(jaxpr.constvars, consts):
            vid = self.value(var, env)
            self.consts.append(JaxInput(path=("const", str(len(self.consts))), value=vid,
                                        shape=tuple(np.shape(c)), dtype=str(getattr(c, "dtype", ""))))
        return env

    def walk(self, jaxpr, scope: list, env: dict) -> None:
        for eqn in jaxpr.eqns:
            stack = str(eqn.source_info.name_stack)
            seg = scope + ([("stack", stack)] if stack else [])
            ins = [self.value(v, env) for v in eqn.invars]
            name = eqn.primitive.name
            params = eqn.params
            if name == "scan":
                self.scan(eqn, seg, ins, env)
            elif name == "while":
                self.while_loop(eqn, seg, ins, env)
            elif name == "cond":
                self.cond(eqn, seg, ins, env)
            elif name in _CALLS and any(_jaxpr_of(params.get(k)) for k in _SUB_KEYS):
                key = next(k for k in _SUB_KEYS if _jaxpr_of(params.get(k)))
                sub, consts = _jaxpr_of(params[key])
                label = _CALLS[name]
                fn = params.get("name") or _func_name(sub)
                if fn and label in ("jit", "custom_jvp", "custom_vjp"):
                    label = f"{label}({fn})"
                self.inline(sub, consts, ins, seg + [("group", label)], eqn.outvars, env)
            else:
                self.emit(eqn, name, seg, ins, env)

    def sub(self, sub, consts, ins, scope) -> list:
        """Walk ``sub`` with its invars reading ``ins``; the value ids of its outvars."""
        inner = self.bind(sub, consts, ins)
        self.walk(sub, scope, inner)
        return [self.value(v, inner) for v in sub.outvars]

    def inline(self, sub, consts, ins, scope, outvars, env) -> None:
        outs = self.sub(sub, consts, ins, scope)
        for var, val in zip(outvars, outs):
            if val is not None and type(var).__name__ != "DropVar":
                env[id(var)] = val
                self.keep.append(var)

    def scan(self, eqn, seg, ins, env) -> None:
        sub, consts = _jaxpr_of(eqn.params["jaxpr"])
        group = seg + [("group", f"scan ×{eqn.params.get('length')}")]
        self.emit(eqn, "scan", group, self.sub(sub, consts, ins, group), env)

    def while_loop(self, eqn, seg, ins, env) -> None:
        p = eqn.params
        cond, cconsts = _jaxpr_of(p["cond_jaxpr"])
        body, bconsts = _jaxpr_of(p["body_jaxpr"])
        nc, nb = p.get("cond_nconsts", 0), p.get("body_nconsts", 0)
        carry = ins[nc + nb:]
        group = seg + [("group", "while")]
        reads = self.sub(cond, cconsts, ins[:nc] + carry, group + [("group", "cond")])
        reads += self.sub(body, bconsts, ins[nc:nc + nb] + carry, group + [("group", "body")])
        self.emit(eqn, "while", group, reads, env)

    def cond(self, eqn, seg, ins, env) -> None:
        group = seg + [("group", "cond")]
        reads = [ins[0]]
        for k, branch in enumerate(eqn.params["branches"]):
            sub, consts = _jaxpr_of(branch)
            reads += self.sub(sub, consts, ins[1:], group + [("group", f"branch_{k}")])
        self.emit(eqn, "cond", group, reads, env)

    def emit(self, eqn, name, seg, ins, env) -> None:
        outs, shapes = [], []
        for v in eqn.outvars:
            if type(v).__name__ == "DropVar":
                continue
            outs.append(self.value(v, env))
            shapes.append(_aval_shape(v.aval))
        source, code = _source(eqn)
        self.ops.append(JaxOp(op=name, scope=list(seg), inputs=[i for i in ins if i is not None], outputs=outs,
                              shapes=shapes, params=_scalar_params(eqn.params), source=source, code=code))


def _func_name(jaxpr) -> Optional[str]:
    info = getattr(jaxpr, "debug_info", None)
    name = getattr(info, "func_name", None) if info is not None else None
    if not name:
        return None
    name = str(name).split(" ")[0]
    return name if name.isidentifier() else None


def _aval_shape(aval) -> tuple:
    shape = getattr(aval, "shape", None)
    dims = None if shape is None else tuple(d if isinstance(d, int) else -1 for d in shape)
    dtype = getattr(aval, "dtype", None)
    return dims, (str(dtype) if dtype is not None else None)


def _scalar_params(params: dict) -> dict:
    out = {}
    for key, value in params.items():
        if key in _SKIPPED_PARAMS or value is None or callable(value) and not isinstance(value, type):
            continue
        if isinstance(value, (bool, int, float, str)):
            out[key] = value
        elif isinstance(value, tuple) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            out[key] = list(value)
        else:
            text = str(value)
            if len(text) <= 200 and " at 0x" not in text and "{" not in text:
                out[key] = text
    return out


def _source(eqn) -> tuple[Optional[str], Optional[str]]:
    from jax._src import source_info_util  # the user frame of an equation (not public API)

    try:
        frame = source_info_util.user_frame(eqn.source_info.traceback)
    except Exception:  # noqa: BLE001 - a frame is a nicety, never a failure
        return None, None
    if frame is None:
        return None, None
    path = frame.file_name
    i = path.rfind("site-packages/")
    short = path[i + len("site-packages/"):] if i >= 0 else path
    code = linecache.getline(path, frame.start_line).strip() or None
    return f"{short}:{frame.start_line} in {frame.function_name}", code


def read_jaxpr(closed, in_paths: list, out_paths: list) -> JaxProgram:
    """``JaxProgram`` of ``closed``; ``in_paths`` are ``(path tuple, role)`` per invar,
    ``out_paths`` a path tuple per outvar."""
    reader = _Reader()
    jaxpr, consts = closed.jaxpr, closed.consts
    env = reader.bind(jaxpr, consts, [])
    inputs = []
    for var, (path, role) in zip(jaxpr.invars, in_paths):
        dims, dtype = _aval_shape(var.aval)
        inputs.append(JaxInput(path=tuple(path), value=reader.value(var, env), role=role, shape=dims, dtype=dtype))
    only = jaxpr.eqns[0] if len(jaxpr.eqns) == 1 else None
    if only is not None and only.primitive.name in ("jit", "pjit") and _jaxpr_of(only.params.get("jaxpr")):
        sub, sub_consts = _jaxpr_of(only.params["jaxpr"])  # a jitted function traced whole: its body
        reader.inline(sub, sub_consts, [reader.value(v, env) for v in only.invars], [], only.outvars, env)
    else:
        reader.walk(jaxpr, [], env)
    outputs = [(reader.value(v, env), tuple(p)) for v, p in zip(jaxpr.outvars, out_paths)]
    return JaxProgram(inputs=inputs + reader.consts, ops=reader.ops,
                      outputs=[(v, p) for v, p in outputs if v is not None])
