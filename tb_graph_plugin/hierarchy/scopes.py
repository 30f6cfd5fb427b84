"""Hierarchy phase 1: MetaNodes from ``/`` scopes.

Follows the stock dashboard ([TB-GRAPH-DOC] "Adding nodes": "If node is named 'a/b/c',
create metanodes 'a' and 'a/b'"). Function library nodes
(``__function_library__<fn>/...``) land in a group whose ``function`` is ``<fn>``, labelled
``ƒ <fn>`` without TensorFlow's ``__inference_`` prefix or a merged trace's ``graph_N_``
(``ƒ _conv_xla_2572``, ``ƒ rnn_while_body_72``, ``ƒ forward _conv_xla_2572_2601``): the group
name's common ``__function_library__`` head made every such label read the same once cut to its
box. When the top level holds ``LIBRARY_MIN_FUNCTIONS`` or more of
them (a Keras 3 training step traced on its first call: a forward and a backward ``_conv_xla``
function per grouped convolution, 36 for ConvNeXtTiny), they go into one group ``__function_library__``
labelled ``ƒ library`` (``inferred`` "library"), where the first of them was: definitions, not part
of the flow, as the stock dashboard draws them in a box of their own beside the root's graph
([TB-SRC] ``render.ts``, ``libraryFunctionsExtract``); 36 boxes in rows pushed the model off the
first view.

Pre-condition: a SlimGraph whose names are normalized (no op name is also a scope) and whose
``op_scopes`` number each MAIN op's scope (``graph.names.index_scopes``).
Post-condition: group 0 is the root ``__root__``; every MAIN op is in exactly one group's
``children`` and ``h.op_parent`` names that group; embedding ops are in no ``children``
list; children keep GraphDef order (a subgroup where the first op below it is); group ids in
the order a walk of the MAIN ops in GraphDef order first needs each scope, ancestors first (but
the library group, made last); ``h.group_index`` maps every group name to its id; no group is more
than ``MAX_SCOPE_DEPTH`` scopes deep, else ``ScopesTooDeep`` is raised (naming the first op in a
scope too deep).

Cost: no pass over names per op: a Python step per distinct scope (its parent from one
``rpartition``) and per group made (its ``MetaNode``), then numpy passes over the MAIN ops (their
group from their scope's code; every group's children by one ``lexsort`` on (holder, first op
below)). A first view's partial build leaves the first part (the tree of scope names,
``_ScopeTree``) for the next build of the same SlimGraph.

The depth limit: the later phases and the layout walk the tree by recursion, one or two Python
frames per level (Python's default limit is 1000 frames); a name of 1,000 scopes, which only a
hostile file writes (real models nest 5-30), ended in ``RecursionError``.
"""

from __future__ import annotations

import re
import weakref
from itertools import compress, repeat
from typing import NamedTuple

import numpy as np

from tb_graph_plugin.graph.model import FUNCTION_LIBRARY_PREFIX
from tb_graph_plugin.hierarchy.model import ROOT_NAME, Hierarchy, MetaNode

__all__ = ["add_group", "build_scopes", "function_label", "MAX_SCOPE_DEPTH", "ScopesTooDeep"]

MAX_SCOPE_DEPTH = 200


class ScopesTooDeep(ValueError):
    """An op name nested in more than ``MAX_SCOPE_DEPTH`` scopes. Data only: ``api`` words it."""

    def __init__(self, name: str, depth: int):
        shown = repr(name) if len(name) <= 80 else f"{name[:80]!r}..."
        super().__init__(f"op {shown} is nested in {depth:,} name scopes, "
                         f"more than the limit of {MAX_SCOPE_DEPTH}")
        self.name, self.depth = name, depth

# A library function's name: a merged trace's graph_N_ (before a TensorFlow name), TensorFlow 2's
# __inference_ (a traced function: __inference_<name>_<uid>), and __forward_ / __backward_ (the
# halves of one a gradient went through), then the function's own name.
_FUNCTION_NAME = re.compile(r"(?:graph_\d+_(?=__))?(?:__inference_(?=.))?(?:__(forward|backward)_(?=.))?(.*)", re.S)
# A scope ``create_causal_mask()`` (``@1`` for its second call) holds the ops a PyTorch module
# computes through one function call (ingest/torch_scopes.py); TensorFlow names cannot hold "(".
_FUNCTION_CALL = re.compile(r"^[A-Za-z_]\w*\(\)(@\d+)?$")


def function_label(fn: str) -> str:
    """The label of a library function's group: ``ƒ`` and the function's own name, without the
    ``graph_N_`` a merged trace puts before each function graph's functions (``ingest.run_metadata``,
    as the stock code does) and TensorFlow's ``__inference_``; TensorFlow's ``__forward_`` and
    ``__backward_`` (the two halves of a function a gradient went through) read as words.

    >>> function_label("__inference__conv_xla_2572"), function_label("rnn_while_body_72")
    ('ƒ _conv_xla_2572', 'ƒ rnn_while_body_72')
    >>> function_label("graph_391___forward__conv_xla_2572_2601")
    'ƒ forward _conv_xla_2572_2601'
    """
    half, own = _FUNCTION_NAME.fullmatch(fn).groups()
    return f"ƒ {half} {own}" if half else "ƒ " + own


def add_group(h: Hierarchy, name: str, label: str, parent: int, cls=MetaNode, **kw) -> MetaNode:
    """Append a new group (not yet linked into ``parent.children``) and index its name."""
    gid = h.n_ops + len(h.groups)
    g = cls(id=gid, name=name, label=label, parent=parent, **kw)
    h.groups.append(g)
    h.group_index[name] = gid
    return g


def build_scopes(h: Hierarchy) -> None:
    """Make the root, a group per scope of ``h.slim.op_scopes`` and per ancestor of one, and
    place every MAIN op (module docstring)."""
    slim = h.slim
    op_scopes = slim.op_scopes
    # a scope of MAX_SCOPE_DEPTH "/"s is as long at least: most graphs count none
    if max(map(len, op_scopes.names), default=0) >= MAX_SCOPE_DEPTH:
        depths = list(map(str.count, op_scopes.names, repeat("/")))
        if max(depths) >= MAX_SCOPE_DEPTH:  # the first op in a scope too deep
            k = next(k for k, d in enumerate(depths) if d >= MAX_SCOPE_DEPTH)
            raise ScopesTooDeep(slim.names[op_scopes.first_op[k]], depths[k] + 1)
    root = add_group(h, ROOT_NAME, ROOT_NAME, -1)
    # 1. The tree: each scope and its ancestors, top-down (``_scope_tree``), or the one a first
    # view's partial build of this SlimGraph left for the whole build after it.
    group_of = h.group_index
    tree = _LEFT.pop(h.slim, None)
    if tree is None:
        tree = _scope_tree(op_scopes.names, op_scopes.first_op.tolist(), root.id, group_of)
    else:
        group_of.update(zip(tree.names, range(root.id + 1, root.id + 1 + len(tree.names))))
        group_of.setdefault(ROOT_NAME, root.id)
    if h.grouped_only is not None:
        _LEFT[h.slim] = tree
    scope_group, names, labels, parents, firsts = tree
    # 2. Every group's children: its ops and subgroups by the first op below each (GraphDef order)
    of_op = op_scopes.of_op
    main_ids = np.flatnonzero(of_op >= 0)
    op_group = np.array(scope_group + [-1], dtype=np.int64)[of_op]  # -1 (an embedding) picks the -1
    h.op_parent = op_group.tolist()
    parent_ids = np.array(parents, dtype=np.int64)
    holder = np.concatenate([op_group[main_ids], parent_ids]) - root.id
    order = np.lexsort((np.concatenate([main_ids, np.array(firsts, dtype=np.int64)]), holder))
    child = np.concatenate([main_ids, np.arange(root.id + 1, root.id + 1 + len(names))])[order].tolist()
    ends = np.cumsum(np.bincount(holder, minlength=1 + len(names))).tolist()
    root.children = child[:ends[0]]
    # 3. The MetaNodes (C-level maps but for their constructor), then the few special labels
    ids = range(root.id + 1, root.id + 1 + len(names))
    groups = list(map(MetaNode, ids, names, labels, parents, map(child.__getitem__, map(slice, ends, ends[1:]))))
    for k in np.flatnonzero(parent_ids == root.id).tolist():
        if names[k].startswith(FUNCTION_LIBRARY_PREFIX):  # a library function's group
            groups[k].function = fn = names[k][len(FUNCTION_LIBRARY_PREFIX):]
            groups[k].label = function_label(fn)
    if "()" in "\0".join(labels):  # a PyTorch function call's scope, maybe
        for k in compress(range(len(names)), map(str.__contains__, labels, repeat("()"))):
            if _FUNCTION_CALL.match(labels[k]):
                groups[k].inferred = "source"
    h.groups.extend(groups)
    _gather_library(h)


LIBRARY_NAME = "__function_library__"
LIBRARY_LABEL = "ƒ library"
LIBRARY_MIN_FUNCTIONS = 5
"""The top level holds at least this many library functions: they are gathered in one group."""


def _gather_library(h: Hierarchy) -> None:
    """The root's library function groups, when ``LIBRARY_MIN_FUNCTIONS`` or more, into one
    group ``LIBRARY_NAME`` in the place of the first of them (module docstring)."""
    root, n = h.root, h.n_ops
    functions = [c for c in root.children if c >= n and h.groups[c - n].function is not None]
    if len(functions) < LIBRARY_MIN_FUNCTIONS or LIBRARY_NAME in h.group_index or LIBRARY_NAME in h.slim.index:
        return  # the name is taken (only a hand-made graph names a node so)
    library = add_group(h, LIBRARY_NAME, LIBRARY_LABEL, root.id, inferred="library")
    library.children = functions
    for c in functions:
        h.groups[c - n].parent = library.id
    gathered = set(functions)
    first = root.children.index(functions[0])
    root.children = root.children[:first] + [library.id] + [c for c in root.children[first:] if c not in gathered]


class _ScopeTree(NamedTuple):
    """The groups :func:`build_scopes` makes, before their MetaNodes: per scope code its group,
    and per group made (ids ``root + 1 ...``) its name, label, parent and first op below it."""

    scope_group: list
    names: list
    labels: list
    parents: list
    firsts: list


_LEFT: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
"""SlimGraph -> the :class:`_ScopeTree` a first view's partial build made (``h.grouped_only``
set), taken by the next build of that SlimGraph: the first view's next round, or the whole build
after it (~0.1 s at 1M ops)."""


def forget_left(slim) -> None:
    """Drop the scope tree a partial build of ``slim`` left (it became or led to the whole build)."""
    _LEFT.pop(slim, None)


def _scope_tree(scope_names: list, first_ops: list, root: int, group_of: dict) -> _ScopeTree:
    """Each scope and its ancestors not yet made, top-down, scopes in the order of their first op
    (group ids as a walk of the ops in GraphDef order makes them); a group's ``firsts`` entry is
    the first op below it, where it goes among its parent's children. Groups are indexed by name
    in ``group_of`` as they are made, "" standing for the root meanwhile and the root's own name
    for no group (a scope named like it takes the name, as ``add_group`` does)."""
    group_of[ROOT_NAME] = None
    group_of[""] = root
    known = group_of.get
    scope_group = []  # per scope code
    names, labels, parents, firsts = [], [], [], []  # per group made here, ids root + 1 ...

    def made(scope: str, first: int) -> int:
        """Make ``scope``'s group and its ancestors not made yet, top-down; return its id."""
        missing = [scope]
        while (gid := known(missing[-1].rpartition("/")[0])) is None:
            missing.append(missing[-1].rpartition("/")[0])
        for name in reversed(missing):
            names.append(name)
            labels.append(name.rpartition("/")[2])
            parents.append(gid)
            firsts.append(first)
            gid = group_of[name] = root + len(names)
        return gid

    for scope, first in zip(scope_names, first_ops):
        gid = known(scope)
        scope_group.append(made(scope, first) if gid is None else gid)
    del group_of[""]
    if group_of[ROOT_NAME] is None:
        group_of[ROOT_NAME] = root
    return _ScopeTree(scope_group, names, labels, parents, firsts)
