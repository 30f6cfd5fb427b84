"""Trace a JAX function to a jaxpr, naming its inputs and outputs and recording Flax NNX calls.

1. ``arguments``: the call's arguments, flattened with their pytree paths. Array leaves
   (``jax.Array``, numpy arrays, ``jax.ShapeDtypeStruct``) are traced; every other leaf (Python
   numbers, strings, flags) is passed as it is (static). A leaf is a parameter (named
   ``params/<path>``) when it is a Flax NNX ``Param`` (its module path), sits under a ``params``
   key (a linen variables dict) or in an argument named ``params``; others are named
   ``<argument>/<path>``. An NNX module given as the function is called on the rest (one that is
   not a pytree, ``pytree=False``, is ``nnx.split`` into ``params`` and ``state`` and merged
   back while tracing).
2. ``record_module_calls``: while tracing, each call of an ``nnx.Module`` subclass's
   ``__call__`` runs inside ``jax.named_scope(<its scope>)``, the scope named as PyTorch's
   (``ingest.torch_scopes.call_scope``: ``Model/blocks/Block[0]/Linear[lin]``, a second call in
   the same parent call ``Linear[lin@1]``). The attribute path is the module's in the root
   module's graph (``nnx.iter_graph``); a module not in it (a copy an ``nnx.scan`` / ``nnx.vmap``
   made) is found by its class when the parent holds one module of it. Linen needs nothing:
   it names its modules in the name stack itself. The original ``__call__`` methods are restored
   after tracing.
3. ``jax.make_jaxpr``: abstract evaluation only (no compilation, no device work).

Post: ``Traced(jaxpr, in_paths, out_paths)``, or the tracing error, raised as ``CaptureError``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import importlib
import os
import threading

import jax
import numpy as np

from tb_graph_plugin.ingest.torch_scopes import call_scope

__all__ = ["CaptureError", "Traced", "trace", "record_module_calls"]


class CaptureError(RuntimeError):
    """Tracing the function failed; the message gives the cause and what to change."""


@dataclasses.dataclass
class Traced:
    jaxpr: object  # ClosedJaxpr
    in_paths: list  # (path tuple, role) per jaxpr invar
    out_paths: list  # path tuple per jaxpr outvar


def _nnx():
    try:
        from flax import nnx
    except ImportError:
        return None
    return nnx


def _key(k) -> str:
    for attr in ("key", "idx", "name"):
        if hasattr(k, attr):
            return str(getattr(k, attr))
    return str(k).strip(".[]'\"")


def _is_array(leaf) -> bool:
    return isinstance(leaf, (jax.Array, np.ndarray, np.generic, jax.ShapeDtypeStruct))


def _arg_names(fn, n: int) -> list[str]:
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            names += [f"{p.name}_{j}" for j in range(n - len(names))]
            break
    return (names + [f"arg{j}" for j in range(len(names), n)])[:n]


def _leaves(tree, nnx) -> list:
    """(path tuple, leaf, is NNX Param) of every leaf, in ``tree_flatten`` order."""
    is_var = (lambda x: isinstance(x, nnx.Variable)) if nnx is not None else None
    out = []
    for path, leaf in jax.tree_util.tree_flatten_with_path(tree, is_leaf=is_var)[0]:
        keys = tuple(_key(k) for k in path)
        if nnx is not None and isinstance(leaf, nnx.Variable):
            param = isinstance(leaf, nnx.Param)
            for sub, inner in jax.tree_util.tree_flatten_with_path(leaf)[0]:
                sub_keys = tuple(k for k in (_key(s) for s in sub) if k not in ("value", "raw_value"))
                out.append((keys + sub_keys, inner, param))
        else:
            out.append((keys, leaf, False))
    return out


def _input_path(arg: str, rest: tuple, nnx_param: bool) -> tuple[tuple, str]:
    if nnx_param:
        return ("params",) + rest, "param"
    if rest[:1] == ("params",):
        return rest, "param"
    if arg == "params":
        return ("params",) + rest, "param"
    return (arg,) + rest, "input"


_ACTIVE = threading.local()


_EXCLUDED: list = []  # the paths registered (once)


def _exclude_this_package() -> None:
    """Frames of this package and of the libraries a model is written with (Flax, Optax) are not
    the user's: the source line of an op (a jaxpr's user frame, a lowered location) is the model's
    line, not the ``__call__`` wrapper's nor Flax's ``Linear.__call__``. (JAX excludes its own
    files and the interpreter's ``lib/python3.X`` prefix, which holds site-packages only outside a
    virtualenv: in one, Flax's frames were the "user" frames.)"""
    if _EXCLUDED:
        return
    try:
        from jax._src import source_info_util  # not public API: without it, lines name the wrapper
    except ImportError:
        return
    paths = [os.path.dirname(os.path.abspath(__file__))]
    for name in ("flax", "optax"):
        try:
            paths.append(os.path.dirname(os.path.abspath(importlib.import_module(name).__file__)))
        except ImportError:
            pass
    _EXCLUDED.extend(paths)
    for path in paths:
        try:
            source_info_util.register_exclusion(path)
        except AttributeError:
            return



@dataclasses.dataclass
class _Call:
    module: object
    scope: str
    path: str  # dotted attribute path from the root ("blocks.0.attn")
    paths: dict  # id(module) -> dotted path, of the root's graph
    classes: dict  # class -> [dotted paths], of the root's graph
    counts: dict = dataclasses.field(default_factory=dict)


def _graph_paths(nnx, root, prefix: str = "") -> tuple[dict, dict]:
    """id(module) -> dotted attribute path, class -> [paths], of ``root``'s graph (paths below
    ``prefix``)."""
    paths, classes = {}, {}
    for path, node in nnx.iter_graph(root):
        if isinstance(node, nnx.Module) and id(node) not in paths:
            dotted = ".".join([prefix] * bool(prefix) + [str(p) for p in path])
            paths[id(node)] = dotted
            classes.setdefault(type(node), []).append(dotted)
    return paths, classes


def _call_wrapper(nnx, original):
    def __call__(self, *args, **kwargs):
        stack = getattr(_ACTIVE, "stack", None)
        if stack is None or (stack and stack[-1].module is self):
            return original(self, *args, **kwargs)  # not tracing, or super().__call__
        cls = type(self).__name__
        if not stack:
            paths, classes = _graph_paths(nnx, self)
            call = _Call(self, cls, "", paths, classes)
            relative = cls
        else:
            parent = stack[-1]
            path = parent.paths.get(id(self))
            if path is None:  # a copy made by an NNX transform: the parent's one module of its class
                below = [p for p in parent.classes.get(type(self), [])
                         if not parent.path or p.startswith(parent.path + ".")]
                path = below[0] if len(below) == 1 else None
            if path is None:
                scope = f"{parent.scope}/{cls}"
                call = _Call(self, scope, parent.path, parent.paths, parent.classes)
            else:
                k = parent.counts.get(path, 0)
                parent.counts[path] = k + 1
                scope = call_scope(parent.scope, parent.path, path, cls, k)
                paths, classes = parent.paths, parent.classes
                if id(self) not in paths:  # a copy: its own graph, under the path found
                    paths, classes = _graph_paths(nnx, self, path)
                call = _Call(self, scope, path, paths, classes)
            relative = call.scope[len(parent.scope) + 1:]
        stack.append(call)
        try:
            with jax.named_scope(relative):
                return original(self, *args, **kwargs)
        finally:
            stack.pop()

    __call__.__wrapped__ = original
    return __call__


@contextlib.contextmanager
def record_module_calls():
    """Name every NNX module call while tracing (module docstring, step 2)."""
    nnx = _nnx()
    if nnx is None:
        yield
        return
    patched = []
    seen, todo = set(), [nnx.Module]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
                if "__call__" in sub.__dict__:
                    patched.append((sub, sub.__dict__["__call__"]))
    for cls, original in patched:
        cls.__call__ = _call_wrapper(nnx, original)
    previous = getattr(_ACTIVE, "stack", None)
    _ACTIVE.stack = []
    try:
        yield
    finally:
        _ACTIVE.stack = previous
        for cls, original in patched:
            cls.__call__ = original


def _merged_call(nnx, graphdef):
    def call(params, state, *a, **k):
        return nnx.merge(graphdef, params, state)(*a, **k)

    return call


def trace(fn, args: tuple, kwargs: dict) -> Traced:
    """The jaxpr of ``fn(*args, **kwargs)`` with its inputs' and outputs' paths (module docstring)."""
    _exclude_this_package()  # at the first trace: Flax is imported by then
    nnx = _nnx()
    if nnx is not None and isinstance(fn, nnx.Module) and jax.tree_util.tree_leaves(fn) == [fn]:
        # a module that is not a pytree (``pytree=False``): its state split out, merged back inside
        graphdef, params, state = nnx.split(fn, nnx.Param, ...)
        n = len(args)
        fn = _merged_call(nnx, graphdef)
        args = (params, state) + tuple(args)
        names = ["params", "state"] + [f"arg{j}" for j in range(n)]
    elif nnx is not None and isinstance(fn, nnx.Module):
        module, fn = fn, (lambda model, *a, **k: model(*a, **k))
        args = (module,) + tuple(args)
        names = ["model"] + _arg_names(module, len(args) - 1)
    else:
        names = _arg_names(fn, len(args))
    tree = (tuple(args), dict(kwargs))
    leaves = _leaves(tree, nnx)
    treedef = jax.tree_util.tree_structure(tree, is_leaf=None)
    flat = jax.tree_util.tree_leaves(tree)
    if len(flat) != len(leaves):
        raise CaptureError("tb_graph_plugin.jax.add_graph: the arguments' pytree could not be read leaf by leaf")
    dynamic = [i for i, leaf in enumerate(flat) if _is_array(leaf)]
    in_paths = []
    for i in dynamic:
        keys, _, param = leaves[i]
        top = keys[0] if keys else "0"
        if top == "0":
            j = int(keys[1])
            arg, rest = names[j] if j < len(names) else f"arg{j}", keys[2:]
        else:
            arg, rest = keys[1], keys[2:]
        in_paths.append(_input_path(arg, rest, param))

    def traced(*values):
        full = list(flat)
        for i, v in zip(dynamic, values):
            full[i] = v
        a, k = jax.tree_util.tree_unflatten(treedef, full)
        return fn(*a, **k)

    try:
        with record_module_calls():
            closed, out_shape = jax.make_jaxpr(traced, return_shape=True)(*[flat[i] for i in dynamic])
    except Exception as e:  # noqa: BLE001 - the cause is the user's to see
        text = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise CaptureError(
            f"tb_graph_plugin.jax.add_graph could not trace the function ({type(e).__name__}: {text[:300]}). "
            "It is traced with jax.make_jaxpr on the arguments given (arrays or jax.ShapeDtypeStruct; "
            "other leaves are passed as static values): the function must be traceable by jax.jit "
            "with those arguments.") from e
    out_paths = [tuple(_key(k) for k in path) or ("output",)
                 for path, _ in jax.tree_util.tree_flatten_with_path(out_shape)[0]]
    if len(out_paths) != len(closed.jaxpr.outvars):
        out_paths = [(str(i),) for i in range(len(closed.jaxpr.outvars))]
    return Traced(closed, in_paths, out_paths)
