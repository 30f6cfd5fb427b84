"""GraphDef -> SlimGraph phases 2 and 6-8: index names; find the scope of each MAIN op; rename
ops that are also namespaces; number the scopes.

Follows the stock dashboard ([TB-SRC] ``tf_graph_common/graph.ts``, see
docs/references.md): a node whose name ``A`` is also a namespace (another node is named
``A/...``) is renamed ``A/(A)`` so the group ``A`` and the op can coexist. Difference on
purpose: only MAIN ops make namespaces (embeddings are not placed by name), so
``avg_pool/Mean`` next to its embedded ``avg_pool/Mean/reduction_indices`` Const stays
an op instead of becoming a group holding one op.

``index_names`` pre-condition: phase 1 done. Post-condition: ``slim.index`` maps every
original name to its first op id; duplicates returned.
``main_op_scopes`` pre-condition: embeddings placed, plumbing renamed. Returns the MAIN ops and
the scope each is in (its name cut at the last ``/``), the one split of names the later
phases share.
``rename_namespace_clashes`` pre-condition: ``main_op_scopes``. Post-condition: no MAIN op
name is a strict ``/`` prefix of another MAIN op name; ``slim.index`` also maps the new
names; the scopes name the renamed MAIN ops' new scopes.
``index_scopes`` pre-condition: the renames done. Post-condition: ``slim.op_scopes``
(``model.OpScopes``) numbers the scopes of the final names.

Cost: C-level passes (a dict insert per op; an ``rpartition`` and a dict ``setdefault`` per
MAIN op; an ``rpartition`` per distinct scope); Python loops only over the renamed ops (and a
set lookup per op when names were renamed by ``plumbing`` or written twice).
"""

from __future__ import annotations

from itertools import compress, count, repeat
from operator import itemgetter

import numpy as np

from tb_graph_plugin.graph.model import OpScopes, SlimGraph
from tb_graph_plugin.wire import EmbeddingRole

__all__ = ["index_names", "index_scopes", "main_op_scopes", "rename_namespace_clashes"]

_IS_MAIN = bytes(int(role == EmbeddingRole.MAIN) for role in range(256))  # ``bytes.translate`` table


def index_names(slim: SlimGraph, op_ids: list[int]) -> list[str]:
    """Fill ``slim.index`` (name -> op id, from ``op_ids``: ``list(range(n_nodes))``, whose int
    objects the index then shares); return the names seen twice (the first op keeps the name)."""
    names = slim.original_names
    if not slim.index:  # usual case, no duplicate names: one C-level pass
        # A non-str key while it is built: CPython then keeps each key's hash in the table (a
        # str-only dict reads it from each probed key object, a cache miss per probe), so
        # building it and the edges' lookups take ~0.5x and ~0.8x the time at 1M names.
        index = {None: -1}
        index.update(zip(names, op_ids))
        del index[None]
        if len(index) == len(names):
            slim.index = index
            return []
    index = slim.index
    duplicates = []
    for i, name in zip(op_ids, names):
        if name in index:
            duplicates.append(name)
            continue
        index[name] = i
    return duplicates


def main_op_scopes(slim: SlimGraph) -> tuple[np.ndarray, list[str]]:
    """The MAIN ops' ids (ascending) and the scope directly holding each, in that order: its
    name up to the last ``/`` (``""`` for a name with none, or with only a leading one). One
    ``rpartition`` per MAIN op, C-level."""
    is_main = slim.embedding.tobytes().translate(_IS_MAIN)  # a byte per op, C-level: 1 for a MAIN op
    scopes = list(map(itemgetter(0), map(str.rpartition, compress(slim.names, is_main), repeat("/"))))
    return np.flatnonzero(np.frombuffer(is_main, dtype=np.uint8)), scopes


def rename_namespace_clashes(slim: SlimGraph, main_ids: np.ndarray, scopes: list[str]) -> int:
    """Rename every op (MAIN or embedding) whose name is a namespace of MAIN ops; return how many.
    ``main_ids, scopes``: :func:`main_op_scopes`; a renamed MAIN op's entry in ``scopes`` becomes
    its former name (the scope now holding it)."""
    names = slim.names
    # the scopes directly holding a MAIN op, then their ancestors a level at a time (C-level
    # ``rpartition``s over the scopes found new at the level below)
    namespaces = set(scopes)
    namespaces.discard("")
    found = namespaces
    while found:
        found = set(map(itemgetter(0), map(str.rpartition, found, repeat("/")))).difference(namespaces)
        found.discard("")
        namespaces |= found
    if not slim.duplicate_names and names == slim.original_names:
        # names as written, each once: ``slim.index`` finds the op of a name (a lookup per namespace)
        found = set(map(slim.index.get, namespaces))
        found.discard(None)
        clashes = np.array(sorted(found), dtype=np.int64)
    else:  # a name renamed by ``plumbing``, or written twice: every name is looked up
        clashes = np.flatnonzero(np.fromiter(map(namespaces.__contains__, names), dtype=bool, count=len(names)))
    if not len(clashes):
        return 0
    at = np.searchsorted(main_ids, clashes)  # where each renamed op is among the MAIN ops, if one
    is_main = main_ids[np.minimum(at, len(main_ids) - 1)] == clashes if len(main_ids) else np.zeros(0, bool)
    for i, main, k in zip(clashes.tolist(), is_main.tolist(), at.tolist()):
        name = names[i]
        if main:
            scopes[k] = name
        leaf = name[name.rfind("/") + 1:]
        names[i] = f"{name}/({leaf})"
        slim.index.setdefault(names[i], i)
    return len(clashes)


def index_scopes(slim: SlimGraph, main_ids: np.ndarray, scopes: list[str]) -> None:
    """Fill ``slim.op_scopes`` (``model.OpScopes``) from :func:`main_op_scopes`' answer (after
    the renames). A dict ``setdefault`` per MAIN op (C-level), then numpy passes."""
    first: dict[str, int] = {}
    # each MAIN op's scope as the position among MAIN ops of that scope's first op
    at = np.fromiter(map(first.setdefault, scopes, count()), dtype=np.int64, count=len(scopes))
    firsts = np.fromiter(first.values(), dtype=np.int64, count=len(first))  # ascending
    code = np.zeros(len(scopes), dtype=np.int32)
    code[firsts] = np.arange(len(firsts), dtype=np.int32)
    of_op = np.full(slim.n_nodes, -1, dtype=np.int32)
    of_op[main_ids] = code[at]
    slim.op_scopes = OpScopes(list(first), of_op, main_ids[firsts])
