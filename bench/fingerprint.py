"""Fingerprints of every stage's output, to show that a refactor changed nothing.

For each graph found under the given paths (every run and tag of every logdir, op and conceptual
graphs, read with the plugin's own ``ingest.local``), prints one line per stage:

* ``slim``       every SlimGraph column (names, ops, edges, kinds, embeddings, shapes)
* ``hierarchy``  ``summary.summarize`` + ``summary.tree`` (groups, series, templates, inferred)
* ``first``      the first-view scene (``first_scene.build_first_view_scene``: what ``/scene`` answers) as wire JSON
* ``open``       scenes with each of the ``--groups`` largest groups opened (with its ancestors)
* ``early``      the first-view scene drawn from ``first_view.first_view_hierarchy`` (the partial
  build a worker sends the first view from): the ``first`` digest again (``(the whole Hierarchy)``
  after it when that graph's first view needs the whole build)

Timing fields (``stats.layout_seconds``, ``stats.groups_laid_out``) are left out; everything else
of the scene, coordinates included, is hashed. Usage::

    python -m bench.fingerprint demo_logs/* bench/_out/corpus/*L9 > before.txt
    ... change ...
    python -m bench.fingerprint demo_logs/* bench/_out/corpus/*L9 > after.txt && diff before.txt after.txt
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from typing import Any, Iterable

import numpy as np


def _digest(value: Any) -> str:
    h = hashlib.sha256()
    if isinstance(value, np.ndarray):
        h.update(str(value.dtype).encode())
        h.update(np.ascontiguousarray(value).tobytes())
    else:
        h.update(json.dumps(value, sort_keys=True, default=str).encode())
    return h.hexdigest()[:16]


_TIMING_KEYS = ("timings", "seconds", "layout_seconds", "groups_laid_out")


def _untimed(value: Any) -> Any:
    """``value`` without wall-clock fields (any dict key named like a timing)."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items()
                if not any(t in str(k) for t in _TIMING_KEYS)}
    if isinstance(value, (list, tuple)):
        return [_untimed(v) for v in value]
    return value


def _slim_digest(slim) -> str:
    parts = []
    for name in sorted(vars(slim)):
        if name in _TIMING_KEYS or name.endswith("_memo"):  # what is computed when asked (cost, pattern columns)
            continue
        value = getattr(slim, name)
        if name in ("node_defs", "embedding_edges"):  # NodeDefs, EmbeddingEdges: as the lists they stand for
            value = list(value)
        if name in ("in_embeddings", "out_embeddings"):  # OpLists: as the dict it stands for
            value = dict(value.items())
        if isinstance(value, np.ndarray):  # a column as the list of its values: the digest of a
            value = value.tolist()  # column does not depend on whether it is a list or an array
        if isinstance(value, (list, tuple, dict, str, int, float)) or value is None:
            parts.append((name, _digest(value)))
    return _digest(parts)


def _scene_digest(scene) -> str:
    from tb_graph_plugin import wire

    return _digest(_untimed(wire.to_plain(scene)))


def _graphs(path: str) -> Iterable[tuple[str, Any]]:
    from tb_graph_plugin import wire
    from tb_graph_plugin.ingest.local import open_logs

    logs = open_logs(path)
    for run in logs.listing().runs:
        for tag in run.tags:
            kinds = []
            if tag.run_graph or tag.op_graph:
                kinds.append(wire.GraphKind.OP)
            if tag.conceptual_graph:
                kinds.append(wire.GraphKind.CONCEPTUAL)
            for kind in kinds:
                ref = wire.GraphRef(run=run.run, tag=tag.tag, kind=kind)
                yield f"{path}:{run.run}:{tag.tag}:{kind.value}", (ref, logs.graph_def(ref))


def fingerprint(path: str, n_groups: int) -> list[str]:
    from tb_graph_plugin.graph import build_slim_graph
    from tb_graph_plugin.hierarchy import build_hierarchy
    from tb_graph_plugin.hierarchy.summary import summarize, tree
    from tb_graph_plugin.ingest.graph_encoding import split_graph_def
    from tb_graph_plugin.layout.scene import LayoutCache, build_scene
    from tb_graph_plugin.layout.scene.first_scene import build_first_view_scene
    from tb_graph_plugin.layout.scene.first_view import first_view_hierarchy

    lines = []
    for label, (ref, graph_def) in _graphs(path):
        # a worker's way: the GraphDef's encoding split into nodes, never parsed whole
        slim = build_slim_graph(split_graph_def(graph_def.SerializeToString(), label))
        h = build_hierarchy(slim)
        lines.append(f"{label} slim {_slim_digest(slim)}")
        lines.append(f"{label} hierarchy {_digest(_untimed([summarize(h), tree(h)]))}")
        cache = LayoutCache()  # one per Hierarchy, as its owner keeps it
        lines.append(f"{label} first {_scene_digest(build_first_view_scene(h, ref, cache=cache))}")
        groups = sorted((g for g in h.groups if g.id != h.root.id), key=lambda g: (-g.cardinality, g.name))
        opened = []
        for g in groups[:n_groups]:
            names, p = [], g
            while p.parent >= h.n_ops:
                names.append(p.name)
                p = h.groups[p.parent - h.n_ops]
            opened.append(_scene_digest(build_scene(h, ref, names, cache=cache)))
        lines.append(f"{label} open {_digest(opened)} ({len(opened)} scenes)")
        early = first_view_hierarchy(slim)
        lines.append(f"{label} early {_scene_digest(build_first_view_scene(early, ref))}"
                     + (" (the whole Hierarchy)" if early.grouped_only is None else ""))
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", help="logdirs or event files")
    ap.add_argument("--groups", type=int, default=12, help="largest groups opened one by one")
    args = ap.parse_args(argv)
    for path in args.paths:
        for line in fingerprint(path, args.groups):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
