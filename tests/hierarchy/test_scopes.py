"""``graph.names`` (renames, ``slim.op_scopes``) and ``hierarchy.scopes`` against oracles stated
from their docstrings, on random GraphDefs.

The oracles read the GraphDef's NodeDefs and the SlimGraph's embedding roles only, and follow the
stock rules plainly ([TB-GRAPH-DOC] "Adding nodes": a node named ``a/b/c`` makes metanodes ``a``
and ``a/b``; [TB-SRC] ``graph.ts``: a name that is also a namespace becomes ``A/(A)``): the
renames from every ``/`` prefix of every MAIN op name; the groups by walking the MAIN ops in
GraphDef order and making each missing scope, its ancestors first, when an op first needs it.
Random names mix repeated segments (clashes, names written twice), leading and doubled ``/``,
PyTorch function-call scopes (``f()``, ``g()@2``), ``__function_library__`` scopes and scopes
named like the root group (``__root__``).
"""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tensorboard.compat.proto import graph_pb2

from tb_graph_plugin.graph import build_slim_graph
from tb_graph_plugin.hierarchy import scopes
from tb_graph_plugin.hierarchy.model import Hierarchy, HierarchyOptions
from tb_graph_plugin.wire import EmbeddingRole

SEGMENTS = ["a", "b", "c", "f()", "g()@2", "__function_library__fn", "__root__", ""]
CALL = re.compile(r"[A-Za-z_]\w*\(\)(@\d+)?")  # a PyTorch function call's scope (module docstring)


@st.composite
def graph_defs(draw):
    g = graph_pb2.GraphDef()
    n = draw(st.integers(1, 40))
    for i in range(n):
        segments = draw(st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4))
        name = "/".join(segments) or "a"
        if draw(st.integers(0, 5)) == 0:
            name = f"{name}/x{i}"  # more distinct names, deeper
        node = g.node.add(name=name, op=draw(st.sampled_from(["Relu", "Relu", "Const"])))
        if i:  # an input from an earlier op: a Const read by a later op is an embedding
            later = g.node[draw(st.integers(0, i - 1))]
            node.input.append(later.name)
    return g


def _scope(name: str) -> str:
    j = name.rfind("/")
    return name[:j] if j > 0 else ""


def _renamed(g: graph_pb2.GraphDef, roles: list[int]) -> list[str]:
    """The stock rename: an op whose name is a namespace of MAIN ops is named ``A/(A)``."""
    namespaces = set()
    for node, role in zip(g.node, roles):
        if role == EmbeddingRole.MAIN:
            namespaces.update(node.name[:j] for j in range(1, len(node.name)) if node.name[j] == "/")
    out = []
    for node in g.node:
        name = node.name
        out.append(f"{name}/({name[name.rfind('/') + 1:]})" if name in namespaces else name)
    return out


def _tree(names: list[str], roles: list[int]) -> dict[str, list]:
    """Scope -> children (op ids and scope names), made in the order the ops first need them."""
    children: dict[str, list] = {"": []}

    def make(scope: str) -> None:
        if scope not in children:
            make(_scope(scope))
            children[scope] = []
            children[_scope(scope)].append(scope)

    for i, (name, role) in enumerate(zip(names, roles)):
        if role == EmbeddingRole.MAIN:
            make(_scope(name))
            children[_scope(name)].append(i)
    return children


@settings(max_examples=300, deadline=None)
@given(graph_defs())
def test_renames_op_scopes_and_scope_groups_match_the_oracles(g):
    slim = build_slim_graph(g)
    roles = list(slim.embedding)
    assert slim.names == _renamed(g, roles)

    op_scopes = slim.op_scopes  # OpScopes' invariants (graph/model.py)
    assert len(set(op_scopes.names)) == len(op_scopes.names)
    assert op_scopes.of_op.tolist() == [op_scopes.names.index(_scope(name)) if role == EmbeddingRole.MAIN else -1
                                        for name, role in zip(slim.names, roles)]
    assert op_scopes.first_op.tolist() == [op_scopes.of_op.tolist().index(k) for k in range(len(op_scopes.names))]
    assert np.all(np.diff(op_scopes.first_op) > 0)

    h = Hierarchy(slim, HierarchyOptions())
    scopes.build_scopes(h)
    tree = _tree(slim.names, roles)
    made = list(tree)[1:]  # group ids in the order the walk makes them
    assert [grp.name for grp in h.groups[1:]] == made
    assert h.group_index == {"__root__": h.n_ops, **{name: h.n_ops + 1 + k for k, name in enumerate(made)}}
    for grp, scope in zip(h.groups, tree):
        assert grp.children == [c if isinstance(c, int) else h.group_index[c] for c in tree[scope]]
        for c in grp.children:
            assert (h.op_parent[c] if c < h.n_ops else h.groups[c - h.n_ops].parent) == grp.id
        if scope:
            label = scope[scope.rfind("/") + 1:]
            top_function = "/" not in scope and scope.startswith("__function_library__")
            fn = scope[len("__function_library__"):] if top_function else None
            assert (grp.label, grp.function) == ((scopes.function_label(fn) if fn is not None else label), fn)
            assert grp.inferred == ("source" if fn is None and CALL.fullmatch(label) else "")
    assert [h.op_parent[i] for i in range(h.n_ops) if roles[i] != EmbeddingRole.MAIN] == \
        [-1] * sum(r != EmbeddingRole.MAIN for r in roles)


def test_the_first_op_in_a_scope_too_deep_is_named():
    g = graph_pb2.GraphDef()
    g.node.add(name="top", op="Relu")
    deep = "/".join(f"s{i}" for i in range(scopes.MAX_SCOPE_DEPTH))
    g.node.add(name=f"{deep}/ok", op="Relu")  # 200 scopes: the limit
    g.node.add(name=f"{deep}/t/first", op="Relu")
    g.node.add(name=f"{deep}/t/second", op="Relu")
    h = Hierarchy(build_slim_graph(g), HierarchyOptions())
    try:
        scopes.build_scopes(h)
    except scopes.ScopesTooDeep as e:
        assert (e.name, e.depth) == (f"{deep}/t/first", scopes.MAX_SCOPE_DEPTH + 1)
    else:
        raise AssertionError("no ScopesTooDeep")


def test_op_parent_array_follows_every_change():
    """``Hierarchy.op_parent_array()`` is made once and equals ``op_parent`` after each way it changes."""
    g = graph_pb2.GraphDef()
    for name in ("a/x", "a/y", "b/z", "w"):
        g.node.add(name=name, op="Relu")
    h = Hierarchy(build_slim_graph(g), HierarchyOptions())
    scopes.build_scopes(h)
    first = h.op_parent_array()
    assert first is h.op_parent_array() and not first.flags.writeable
    assert first.tolist() == h.op_parent
    b = h.group_index["b"]
    h.set_parent(0, b)
    assert h.op_parent_array().tolist() == h.op_parent and h.op_parent_array()[0] == b
    h.set_parents([1, 3], b)
    assert h.op_parent_array().tolist() == h.op_parent == [b, b, b, b]
    h.op_parent = [-1, -1, -1, -1]
    assert h.op_parent_array().tolist() == [-1, -1, -1, -1]


def _with_functions(k: int, extra: str = "") -> Hierarchy:
    """A hand-made GraphDef: one model op, ``k`` library functions of one op each, and maybe an op
    named ``extra``."""
    g = graph_pb2.GraphDef()
    g.node.add(name="model/x", op="Relu")
    for i in range(k):
        f = g.library.function.add()
        f.signature.name = f"fn_{i}"
        f.node_def.add(name="y", op="Relu")
    if extra:
        g.node.add(name=extra, op="Relu")
    h = Hierarchy(build_slim_graph(g), HierarchyOptions())
    scopes.build_scopes(h)
    return h


def test_five_library_functions_are_gathered_where_the_first_was_and_four_are_not():
    h = _with_functions(5)
    top = [h.name_of(c) for c in h.group(h.root.id).children]
    assert top == ["model", scopes.LIBRARY_NAME]
    library = h.group(scopes.LIBRARY_NAME)
    assert (library.label, library.inferred, library.parent) == ("ƒ library", "library", h.root.id)
    assert [h.group(c).function for c in library.children] == [f"fn_{i}" for i in range(5)]
    assert all(h.group(c).parent == library.id for c in library.children)
    four = _with_functions(4)
    assert [four.group(c).function for c in four.group(four.root.id).children] == [None] + [f"fn_{i}" for i in range(4)]


def test_library_functions_stay_apart_when_a_node_takes_the_library_name():
    h = _with_functions(5, extra=scopes.LIBRARY_NAME)
    assert not h.is_group(scopes.LIBRARY_NAME)
    assert sum(1 for c in h.group(h.root.id).children if h.is_group(c) and h.group(c).function) == 5
