"""Hierarchy phase 1: MetaNodes from ``/`` scopes.

Follows the stock dashboard ([TB-GRAPH-DOC] "Adding nodes": "If node is named 'a/b/c',
create metanodes 'a' and 'a/b'"). Function library nodes
(``__function_library__<fn>/...``) land in a group whose ``function`` is ``<fn>``, labelled
``ƒ <fn>`` without TensorFlow's ``__inference_`` prefix (``ƒ _conv_xla_2572``, ``ƒ
rnn_while_body_72``): the group name's common ``__function_library__`` head made every such label
read the same once cut to its box.

Pre-condition: a SlimGraph whose names are normalized (no op name is also a scope).
Post-condition: group 0 is the root ``__root__``; every MAIN op is in exactly one group's
``children`` and ``h.op_parent`` names that group; embedding ops are in no ``children``
list; children keep GraphDef order; ``h.group_index`` maps every group name to its id; no
group is more than ``MAX_SCOPE_DEPTH`` scopes deep, else ``ScopesTooDeep`` is raised.

The depth limit: the later phases and the layout walk the tree by recursion, one or two Python
frames per level (Python's default limit is 1000 frames); a name of 1,000 scopes, which only a
hostile file writes (real models nest 5-30), ended in ``RecursionError``.
"""

from __future__ import annotations

import re

from tb_graph_plugin.graph.model import FUNCTION_LIBRARY_PREFIX
from tb_graph_plugin.wire import EmbeddingRole
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

_TF_FUNCTION_PREFIX = "__inference_"  # TensorFlow 2 names a traced function __inference_<name>_<uid>
# A scope ``create_causal_mask()`` (``@1`` for its second call) holds the ops a PyTorch module
# computes through one function call (ingest/torch_scopes.py); TensorFlow names cannot hold "(".
_FUNCTION_CALL = re.compile(r"^[A-Za-z_]\w*\(\)(@\d+)?$")


def function_label(fn: str) -> str:
    """The label of a library function's group: ``ƒ`` and the function's own name.

    >>> function_label("__inference__conv_xla_2572"), function_label("rnn_while_body_72")
    ('ƒ _conv_xla_2572', 'ƒ rnn_while_body_72')
    """
    if fn.startswith(_TF_FUNCTION_PREFIX) and len(fn) > len(_TF_FUNCTION_PREFIX):
        fn = fn[len(_TF_FUNCTION_PREFIX):]
    return "ƒ " + fn


def add_group(h: Hierarchy, name: str, label: str, parent: int, cls=MetaNode, **kw) -> MetaNode:
    """Append a new group (not yet linked into ``parent.children``) and index its name."""
    gid = h.n_ops + len(h.groups)
    g = cls(id=gid, name=name, label=label, parent=parent, **kw)
    h.groups.append(g)
    h.group_index[name] = gid
    return g


def build_scopes(h: Hierarchy) -> None:
    slim = h.slim
    n = h.n_ops
    root = add_group(h, ROOT_NAME, ROOT_NAME, -1)
    scope_ids: dict[str, int] = {"": root.id}
    groups = h.groups
    op_parent = h.op_parent

    def scope_id(scope: str) -> int:
        gid = scope_ids.get(scope)
        if gid is not None:
            return gid
        j = scope.rfind("/")
        parent = scope_id(scope[:j] if j > 0 else "")
        label = scope[j + 1:]
        fn = None
        if j < 0 and label.startswith(FUNCTION_LIBRARY_PREFIX):
            fn = label[len(FUNCTION_LIBRARY_PREFIX):]
            label = function_label(fn)
        g = add_group(h, scope, label, parent, function=fn,
                      inferred="source" if _FUNCTION_CALL.match(label) else "")
        groups[parent - n].children.append(g.id)
        scope_ids[scope] = g.id
        return g.id

    embedding, main = slim.embedding, EmbeddingRole.MAIN
    known = scope_ids.get
    root_id = root.id
    for i, name in enumerate(slim.names):
        if embedding[i] != main:
            continue
        j = name.rfind("/")
        if j > 0:
            scope = name[:j]
            gid = known(scope)
            if gid is None:
                depth = scope.count("/") + 1
                if depth > MAX_SCOPE_DEPTH:  # scope_id recurses once per level
                    raise ScopesTooDeep(name, depth)
                gid = scope_id(scope)
        else:
            gid = root_id
        groups[gid - n].children.append(i)
        op_parent[i] = gid
