"""Phase 2 of GraphDef -> SlimGraph: normalize names and index them.

Follows the stock dashboard (``tf_graph_common/graph.ts``, summarized in the internals
brief section 3): a node whose name ``A`` is also a namespace (another node is named
``A/...``) is renamed ``A/(A)`` so the group ``A`` and the op can coexist.

Pre-condition: ``slim.names == slim.original_names`` (phase 1 done).
Post-condition: ``slim.names`` are unique when the originals were (a duplicate keeps the
first occurrence in the index and is reported by the caller); no name is a strict ``/``
prefix of another; ``slim.index`` maps both normalized and original names to op ids.
"""

from __future__ import annotations

from tb_graph_plugin.graph.model import SlimGraph

__all__ = ["normalize_names"]


def normalize_names(slim: SlimGraph, rename_namespace_clashes: bool = True) -> list[str]:
    """Apply the ``A`` -> ``A/(A)`` rename and build ``slim.index``; return duplicate names."""
    names = slim.names
    if rename_namespace_clashes:
        namespaces = set()
        for name in names:
            j = name.rfind("/")
            while j > 0:
                scope = name[:j]
                if scope in namespaces:
                    break
                namespaces.add(scope)
                j = name.rfind("/", 0, j)
        for i, name in enumerate(names):
            if name in namespaces:
                leaf = name[name.rfind("/") + 1:]
                names[i] = f"{name}/({leaf})"
    index = slim.index
    duplicates = []
    for i, name in enumerate(slim.original_names):
        if name in index:
            duplicates.append(name)
            continue
        index[name] = i
    for i, name in enumerate(names):
        index.setdefault(name, i)
    return duplicates
