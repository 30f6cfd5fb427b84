"""The layout component's private input and output types, declared once.

Layout is usable on its own: build a :class:`LayoutGraph` of :class:`LayoutNode` and
:class:`LayoutEdge`, pick :class:`LayoutOptions`, call :func:`tb_graph_plugin.layout.layout`
and read a :class:`LayoutResult`. The input is never mutated; the result holds only
positions, sizes and edge points (the dagre contract).

Coordinates in a result are pixels, y growing downwards, ``positions`` are node centres,
and the drawing's bounding box (nodes and edge points) is ``[0, width] x [0, height]``.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Optional

from tb_graph_plugin.wire import EdgeKind

__all__ = [
    "Engine",
    "RankDir",
    "LayoutNode",
    "LayoutEdge",
    "LayoutGraph",
    "LayoutOptions",
    "LayoutResult",
    "Point",
]

Point = tuple[float, float]  # node centres and sizes; edge points are [x, y] lists (JSON-ready)


class Engine(str, enum.Enum):
    """Which layered layout engine to use (``layout.engines.create`` makes one)."""

    AUTO = "auto"  # dot when the cheap guard says it is safe, else fast; dot timeout -> fast
    DOT = "dot"  # Graphviz dot through pygraphviz, in a worker process with a time limit
    FAST = "fast"  # our own numpy layered path (tb_graph_plugin.layout.fast)


class RankDir(str, enum.Enum):
    """Direction in which edges point (Graphviz ``rankdir``)."""

    BT = "BT"  # bottom to top: TensorBoard's convention, edges point upward
    TB = "TB"
    LR = "LR"
    RL = "RL"

    @property
    def vertical(self) -> bool:
        return self in (RankDir.BT, RankDir.TB)


@dataclasses.dataclass(frozen=True)
class LayoutNode:
    id: str
    width: float
    height: float


@dataclasses.dataclass(frozen=True)
class LayoutEdge:
    source: str
    target: str
    weight: float = 1.0  # pull towards a short, straight edge
    kind: EdgeKind = EdgeKind.DATA  # informational for engines


@dataclasses.dataclass(frozen=True)
class LayoutGraph:
    """A directed multigraph to lay out. Cycles and self-loops are allowed."""

    nodes: tuple[LayoutNode, ...]
    edges: tuple[LayoutEdge, ...] = ()

    def __init__(self, nodes, edges=()):
        object.__setattr__(self, "nodes", tuple(nodes))
        object.__setattr__(self, "edges", tuple(edges))
        self.validate()

    def validate(self) -> None:
        ids = set()
        for n in self.nodes:
            if n.id in ids:
                raise ValueError(f"duplicate layout node id {n.id!r}")
            if not (n.width >= 0 and n.height >= 0):
                raise ValueError(f"layout node {n.id!r} has a negative or NaN size")
            ids.add(n.id)
        for e in self.edges:
            if e.source not in ids or e.target not in ids:
                raise ValueError(f"layout edge {e.source!r}->{e.target!r} names an unknown node")
            if not e.weight >= 0:
                raise ValueError("layout edge weight must be >= 0")


@dataclasses.dataclass(frozen=True)
class LayoutOptions:
    """Every knob of the layout, with the stock TensorBoard defaults (dagre values)."""

    rankdir: RankDir = RankDir.BT
    nodesep: float = 5.0  # px between neighbouring nodes of one rank
    ranksep: float = 25.0  # px between ranks
    edgesep: float = 5.0  # px between edges (dummy nodes) of one rank
    engine: Engine = Engine.AUTO
    # dot: time limit (None: run in-process, no limit) and the guard for Engine.AUTO
    dot_timeout_s: Optional[float] = 5.0
    dot_max_nodes: int = 1500
    dot_max_dummies: int = 4000  # long-edge dummy nodes of the longest-path layering
    auto_best_of_max_nodes: int = 60  # AUTO runs dot AND fast on graphs this small, keeps fewer crossings
    # fast path
    order_sweeps: int = 12  # max barycenter sweeps (stops early without progress)
    transpose_max_nodes: int = 4000  # nodes incl. dummies; above it, no transposition
    position_iterations: int = 4
    rank_lp_max_edges: int = 6000  # optimal (network-simplex) layering up to this size,
    rank_lp_dummy_ratio: float = 2.0  # ... or when the heuristic needs more dummies per node
    rank_lp_time_limit_s: float = 1.0  # solver time limit (then the heuristic layering stays)
    fast_max_dummies: int = 60000  # beyond it the longest edges get no dummy chain
    component_sep: float = 20.0  # px between packed connected components
    pack_aspect: float = 1.5  # target width / height of the packed components
    count_crossings: bool = False  # fill LayoutResult.crossings (costs time)
    memoize: bool = True  # identical graphs (up to node ids) reuse one layout, given a LayoutMemo (memo.py)


@dataclasses.dataclass
class LayoutResult:
    positions: dict[str, Point]  # node centre
    sizes: dict[str, Point]  # (width, height), copied from the input
    edge_points: list[list[list[float]]]  # [[x, y], ...] parallel to LayoutGraph.edges, source border -> target border
    width: float
    height: float
    engine_used: Engine
    crossings: Optional[int] = None
    # parallel to LayoutGraph.edges: True when the target lies behind the source along the
    # rank direction (a back edge of a cycle, reversed by cycle removal or drawn so by dot)
    reversed: list[bool] = dataclasses.field(default_factory=list)
    timings: dict[str, float] = dataclasses.field(default_factory=dict)  # seconds per phase
