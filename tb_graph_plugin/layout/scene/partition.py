"""Which children of a group the layered engine lays out, and which are drawn elsewhere.

Before layout, high fan-out parameters float beside their consumers (:mod:`floating`, [NGRAPH-VIS]),
auxiliary children go to side columns (:mod:`extract`, [VAST] §5.2) and edges touching them become
annotation stubs (:mod:`annotate`), as do the edges of hub bridges.

Pre: the group's boundary edges. Post: a :class:`Partition` whose ``core``, ``left``, ``right``
and floated children are disjoint and together the group's children, in children order.
"""

from __future__ import annotations

from tb_graph_plugin.hierarchy.model import Hierarchy
from tb_graph_plugin.layout.scene.annotate import annotate_extracted, annotate_hub_bridges
from tb_graph_plugin.layout.scene.bridge import BoundaryEdge
from tb_graph_plugin.layout.scene.endpoint import Partition
from tb_graph_plugin.layout.scene.extract import extract_auxiliary
from tb_graph_plugin.layout.scene.floating import float_parameters
from tb_graph_plugin.layout.scene.options import SceneOptions

__all__ = ["partition"]


def partition(h: Hierarchy, gid: int, bounds: list[BoundaryEdge], o: SceneOptions) -> Partition:
    """The flow children, the side columns, the annexes (floating copies, annotation stubs) drawn
    in the children's columns, the carriers, and the hub bridges drawn as stubs."""
    floated, annexes, carriers = float_parameters(h, gid, bounds, o)
    fl = frozenset(floated)
    left, right = extract_auxiliary(h, gid, o, exclude=fl)
    side = set(left) | set(right)
    annotate_extracted(h, gid, side, fl, bounds, o, annexes)
    hubs = annotate_hub_bridges(h, gid, side, fl, bounds, o, annexes)
    core = [c for c in h.group(gid).children if c not in side and c not in fl]
    return Partition(core, left, right, annexes, carriers, hubs)
