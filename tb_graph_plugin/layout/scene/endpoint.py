"""The typed vocabulary of a group layout: edge endpoints, BridgeGraph edges, stubs, the partition.

An edge drawn inside an expanded group runs between two :data:`Endpoint`\\ s: a :class:`Child`
of the group (an op, a collapsed or expanded group, a floated parameter's carrier copy), a
:class:`Bridge` on the group border ([VAST] §5.2: one per direction and outside node), or a
:class:`Stub` standing for the far end of a cut edge (``stubs``, ``fold``, ``pack``), or an :class:`Annex` in a child's
embedding column (a floated parameter's copy, an annotation stub). A
:class:`FlowEdge` is what one edge of the group's private LayoutGraph stands for; a
:class:`StubNode` is a layout node drawn as a stub naming its other end.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Literal, NamedTuple, Optional, Union

from tb_graph_plugin.layout.model import LayoutGraph
from tb_graph_plugin.wire import EdgeKind, NodeKind

__all__ = ["Child", "Bridge", "Stub", "Endpoint", "FlowEdge", "StubNode", "StubSizer", "Partition", "BridgeGraph",
           "Annex", "Annexes"]


# NamedTuples: made and hashed per edge, in C (a frozen dataclass costs ~1 us to make). The three
# never compare equal to one another as keys: a Child has one field, a Stub's direction is a str.
@dataclasses.dataclass
class Annex:
    """A small node drawn in a child's embedding column, joined to the child by ``edges``.

    In the left (input) column each edge runs annex -> child, in the right (output) column
    child -> annex. ``edges`` holds ``(kind, size, count, base_edge)`` per drawn edge.
    """

    name: str
    kind: NodeKind
    width: float
    height: float
    hid: Optional[int] = None
    of: Optional[str] = None
    label: Optional[str] = None
    edges: list = dataclasses.field(default_factory=list)


Annexes = dict  # child id -> ([Annex] left column, [Annex] right column)


class Child(NamedTuple):
    """A child of the group, by hierarchy id."""

    hid: int


class Bridge(NamedTuple):
    """The group-border node of the edges from (``incoming``) or to the outside node ``outer``."""

    incoming: bool
    outer: int


class Stub(NamedTuple):
    """One end of a cut edge: ``out`` at its source (names the target), ``in`` at its target."""

    id: Union[int, str]
    direction: Literal["in", "out"]


Endpoint = Union[Child, Bridge, Stub]


class FlowEdge(NamedTuple):
    """What one edge of a group's LayoutGraph stands for (a metaedge or a boundary edge)."""

    source: Endpoint
    target: Endpoint
    kind: EdgeKind
    size: int
    count: int
    base_edge: Optional[int]  # the base edge when count == 1 (shape label)

    def with_ends(self, source: Endpoint, target: Endpoint) -> "FlowEdge":
        return self._replace(source=source, target=target)


class StubNode(NamedTuple):
    """A layout node ``lid`` drawn as the stub ``key``, labelled with its other end ``other``."""

    lid: str
    key: Stub
    other: Endpoint


# (direction, other end) -> the stub's (width, height): its pill holds its label (``sizes.stub_box``)
StubSizer = Callable[[str, "Endpoint"], tuple[float, float]]


@dataclasses.dataclass
class Partition:
    """The children of a group by where they are drawn (see ``partition.partition``)."""

    core: list[int]  # laid out by the layered engine
    left: list[int]  # side columns (extracted auxiliary nodes)
    right: list[int]
    annexes: Annexes  # floating copies and annotation stubs in the children's embedding columns
    carriers: set[int]  # floated children whose carrier copy takes their outgoing bridges
    hubs: frozenset[Bridge]  # bridges drawn as stubs beside each child instead of laid out


@dataclasses.dataclass
class BridgeGraph:
    """A group's BridgeGraph as a private LayoutGraph; ``edges`` parallel to ``graph.edges``,
    ``bridges`` the layout id of each bridge (bridges joining the same children share one)."""

    graph: LayoutGraph
    edges: list[FlowEdge]
    bridges: dict[Bridge, str]
