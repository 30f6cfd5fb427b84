"""Our own fast layered layout (Sugiyama framework), one phase per module.

The pipeline is the list :data:`PIPELINE`; :func:`run` times each step. Phases share the
private :class:`~tb_graph_plugin.layout.fast.state.LayeredGraph`; the input
:class:`~tb_graph_plugin.layout.model.LayoutGraph` is only read.
"""

from __future__ import annotations

import time

from tb_graph_plugin.layout.fast.acyclic import remove_cycles
from tb_graph_plugin.layout.fast.components import find_components
from tb_graph_plugin.layout.fast.normalize import insert_dummies
from tb_graph_plugin.layout.fast.order import order_layers
from tb_graph_plugin.layout.fast.pack import pack_components
from tb_graph_plugin.layout.fast.position import assign_coordinates
from tb_graph_plugin.layout.fast.rank import assign_layers
from tb_graph_plugin.layout.fast.route import route_edges
from tb_graph_plugin.layout.fast.state import LayeredGraph, build

__all__ = ["PIPELINE", "run"]

PIPELINE = [
    ("components", find_components),
    ("acyclic", remove_cycles),
    ("rank", assign_layers),
    ("normalize", insert_dummies),
    ("order", order_layers),
    ("position", assign_coordinates),
    ("pack", pack_components),
    ("route", route_edges),
]


def run(graph, options, stop_after: str | None = None) -> tuple[LayeredGraph, dict[str, float]]:
    """Run the pipeline on a private copy of ``graph``; ``stop_after`` names a phase (tests)."""
    timings = {}
    t = time.perf_counter()
    g = build(graph, options)
    timings["build"] = time.perf_counter() - t
    for name, phase in PIPELINE:
        if g.n_real == 0:
            break
        t = time.perf_counter()
        phase(g)
        timings[name] = time.perf_counter() - t
        if name == stop_after:
            break
    return g, timings
