"""The private layered graph the fast phases share: every cross-phase field declared once.

Built from a :class:`~tb_graph_plugin.layout.model.LayoutGraph` by :func:`build`; phases fill
the later fields in pipeline order. The frame is canonical: ranks grow downwards (TB),
``across`` is a node's extent along a rank, ``along`` its extent across ranks. The
:mod:`~tb_graph_plugin.layout.fast.frame` phase maps it to the requested rank direction.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np

from tb_graph_plugin.layout.model import LayoutGraph, LayoutOptions

__all__ = ["LayeredGraph", "build"]


@dataclasses.dataclass
class LayeredGraph:
    options: LayoutOptions
    n_real: int  # real nodes are 0..n_real-1, dummies follow
    across: np.ndarray  # float[n]
    along: np.ndarray  # float[n]
    # kept (non-self-loop) input edges, index-aligned arrays
    src: np.ndarray  # int[m] (after acyclic: in the acyclic direction)
    dst: np.ndarray  # int[m]
    weight: np.ndarray  # float[m]
    edge_index: np.ndarray  # int[m]: index into LayoutGraph.edges
    reversed: np.ndarray  # bool[m], set by acyclic
    comp: Optional[np.ndarray] = None  # int[n] connected component, set by components
    n_comp: int = 0
    layer: Optional[np.ndarray] = None  # int[n], set by rank (dummies by normalize)
    # set by normalize: unit-length edges (layer[u] + 1 == layer[v]) and per-edge chains
    usrc: Optional[np.ndarray] = None
    udst: Optional[np.ndarray] = None
    uweight: Optional[np.ndarray] = None
    first_dummy: Optional[np.ndarray] = None  # int[m]: first dummy id of kept edge i
    n_dummies: Optional[np.ndarray] = None  # int[m]: its number of dummies (0: a unit edge)
    straight: Optional[np.ndarray] = None  # bool[m]: long edge left without dummies (budget)
    # set by order: position of each node inside its (layer) row; comps are contiguous
    pos: Optional[np.ndarray] = None
    # set by position (component-local) and pack (global), canonical frame
    x: Optional[np.ndarray] = None
    y: Optional[np.ndarray] = None
    row_top: Optional[np.ndarray] = None  # float[n]: top of the node's row
    row_bottom: Optional[np.ndarray] = None
    # set by route, canonical frame: points of kept edge i are px/py[ptr[i]:ptr[i+1]]
    px: Optional[np.ndarray] = None
    py: Optional[np.ndarray] = None
    ptr: Optional[np.ndarray] = None

    def chain(self, i: int) -> list[int]:
        """Node path of kept edge i: src, its dummies, dst (acyclic direction)."""
        f, k = int(self.first_dummy[i]), int(self.n_dummies[i])
        return [int(self.src[i]), *range(f, f + k), int(self.dst[i])]

    @property
    def n(self) -> int:
        return len(self.across)

    @property
    def is_dummy(self) -> np.ndarray:
        return np.arange(self.n) >= self.n_real


def build(graph: LayoutGraph, options: LayoutOptions) -> LayeredGraph:
    """Copy the whitelisted attributes of ``graph`` into a new :class:`LayeredGraph`."""
    index = {node.id: i for i, node in enumerate(graph.nodes)}
    w = np.array([node.width for node in graph.nodes], dtype=float)
    h = np.array([node.height for node in graph.nodes], dtype=float)
    across, along = (w, h) if options.rankdir.vertical else (h, w)
    kept = [(index[e.source], index[e.target], e.weight, i) for i, e in enumerate(graph.edges) if e.source != e.target]
    arr = np.array(kept, dtype=float).reshape(-1, 4)
    return LayeredGraph(
        options=options,
        n_real=len(graph.nodes),
        across=across.copy(),
        along=along.copy(),
        src=arr[:, 0].astype(np.int64),
        dst=arr[:, 1].astype(np.int64),
        weight=arr[:, 2].copy(),
        edge_index=arr[:, 3].astype(np.int64),
        reversed=np.zeros(len(kept), dtype=bool),
    )
