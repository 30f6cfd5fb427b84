"""Our own fast layered layout (Sugiyama framework), one phase per module.

The pipeline is the list :data:`PIPELINE` (every phase skipped on an empty graph); :func:`run`
times each step. Phases share the
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
from tb_graph_plugin.pipeline import Pipeline, Step, Timings

__all__ = ["PIPELINE", "run"]

def _has_nodes(g: LayeredGraph) -> bool:
    return g.n_real > 0


PIPELINE: Pipeline[LayeredGraph] = Pipeline("fast", [
    Step(name, phase, when=_has_nodes) for name, phase in [
        ("components", find_components),
        ("acyclic", remove_cycles),
        ("rank", assign_layers),
        ("normalize", insert_dummies),
        ("order", order_layers),
        ("position", assign_coordinates),
        ("pack", pack_components),
        ("route", route_edges),
    ]
])


def run(graph, options, stop_after: str | None = None) -> tuple[LayeredGraph, dict[str, float]]:
    """Run the pipeline on a private copy of ``graph``; ``stop_after`` names a phase (tests)."""
    timings = Timings()
    t = time.perf_counter()
    g = build(graph, options)
    timings["build"] = time.perf_counter() - t
    return PIPELINE.run(g, timings=timings, stop_after=stop_after), timings
