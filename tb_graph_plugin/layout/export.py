"""Scene export for documents and Graphviz users: ``scene_to_svg`` and ``scene_to_dot``.

Behind ``tb-graph layout PATH [--expand G ...] [--format json|svg|dot]`` (JSON is
``wire.to_json(scene)``). All text from the graph (names, labels, ops) is escaped: SVG
with XML escaping, DOT with quoted strings (``"`` escaped). The SVG's texts are placed by
:mod:`tb_graph_plugin.layout.labels` with the canvas's rules (no text over another text or a
node; op labels beside their ellipse, edge labels on their own edge), each ``<text>`` naming
its owner in ``data-owner``.
"""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

from tb_graph_plugin import wire
from tb_graph_plugin.layout.labels import FONT_FAMILY, place_labels

__all__ = ["scene_to_svg", "scene_to_dot", "scene_to_json", "EXPORTERS"]

_FILL = {
    wire.NodeKind.OP: "#ffffff",
    wire.NodeKind.META: "#d0d9f0",
    wire.NodeKind.SERIES: "#e3e8f5",
    wire.NodeKind.BRIDGE: "#999999",
    wire.NodeKind.IN_EMBEDDING: "#f0f0f0",
    wire.NodeKind.OUT_EMBEDDING: "#f0f0f0",
    wire.NodeKind.STUB: "#ffffff",
}


def _f(v: float) -> str:
    return f"{v:.2f}".rstrip("0").rstrip(".")


def scene_to_svg(scene: wire.Scene, margin: float = 10.0) -> str:
    """A standalone SVG drawing of the scene (groups behind their children, edges on top)."""
    w, h = scene.width + 2 * margin, scene.height + 2 * margin
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_f(w)}" height="{_f(h)}" '
        f'viewBox="{_f(-margin)} {_f(-margin)} {_f(w)} {_f(h)}" font-family={quoteattr(FONT_FAMILY)}>',
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"5\" markerUnits=\"userSpaceOnUse\" "
        "markerHeight=\"5\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#666\"/></marker></defs>",
    ]
    if scene.graph.run or scene.graph.tag:
        out.append(f"<title>{escape(scene.graph.run)} / {escape(scene.graph.tag)}</title>")
    depth: dict[str, int] = {}
    by_name = {n.name: n for n in scene.nodes}

    def level(n) -> int:
        if n.name not in depth:
            depth[n.name] = 0 if n.parent is None or n.parent not in by_name else level(by_name[n.parent]) + 1
        return depth[n.name]

    for n in sorted(scene.nodes, key=lambda n: (level(n), not n.expanded)):
        x, y = n.x - n.width / 2, n.y - n.height / 2
        rx = n.height / 2 if n.kind == wire.NodeKind.OP else 3
        dash = ' stroke-dasharray="2,2"' if n.extracted else ""
        out.append(f'<g class="node {n.kind.value}" data-name={quoteattr(n.name)}>'
                   f"<title>{escape(n.name)}{' (' + escape(n.op) + ')' if n.op else ''}</title>"
                   f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(n.width)}" height="{_f(n.height)}" rx="{_f(rx)}" '
                   f'fill="{_FILL.get(n.kind, "#fff")}" stroke="#888" stroke-width="0.6"{dash}/>')
        out.append("</g>")
    for e in scene.edges:
        pts = " ".join(f"{_f(x)},{_f(y)}" for x, y in e.points)
        dash = ' stroke-dasharray="3,2"' if e.kind == wire.EdgeKind.CONTROL else ""
        start = ' marker-start="url(#arrow)"' if e.kind == wire.EdgeKind.REFERENCE else ""
        out.append(f'<polyline class="edge {e.kind.value}" points="{pts}" fill="none" stroke="#666" '
                   f'stroke-width="{_f(e.width)}"{dash}{start} marker-end="url(#arrow)">'
                   f"<title>{escape(e.source)} \u2192 {escape(e.target)}"
                   f"{' (' + escape(e.label) + ')' if e.label else ''}</title></polyline>")
    for t in place_labels(scene):  # on top of nodes and edges, covering neither nodes nor each other
        out.append(f'<text x="{_f(t.anchor_x)}" y="{_f(t.baseline_y)}" font-size="{_f(t.px)}" '
                   f'data-owner={quoteattr(t.owner)} data-box="{_f(t.x0)},{_f(t.y0)},{_f(t.x1)},{_f(t.y1)}">'
                   f"{escape(t.text)}</text>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def _q(s: str) -> str:
    """A DOT quoted string. In DOT only ``\\"`` is an escape (other characters stay as they
    are), so names round-trip; a trailing backslash would escape the closing quote and a
    backslash-newline is a line continuation, so those get a space."""
    s = s.replace("\\\n", "\\ \n")
    return '"' + s.replace('"', '\\"') + (" " if s.endswith("\\") else "") + '"'


def scene_to_dot(scene: wire.Scene) -> str:
    """Graphviz DOT of the scene: expanded groups as clusters, positions pinned (``pos``, points)."""
    children: dict = {}
    for n in scene.nodes:
        children.setdefault(n.parent, []).append(n)
    lines = ["digraph scene {", f"  graph [rankdir=BT, bb={_q(f'0,0,{_f(scene.width)},{_f(scene.height)}')}];",
             '  node [shape=box, fixedsize=true, fontsize=7];']
    cluster = [0]

    def pos(x, y):
        return f"{_f(x)},{_f(scene.height - y)}"

    def emit(parent, indent):
        for n in children.get(parent, []):
            if n.expanded:
                cluster[0] += 1
                lines.append(f"{indent}subgraph cluster_{cluster[0]} {{")
                lines.append(f"{indent}  label={_q(n.label)};")
                emit(n.name, indent + "  ")
                lines.append(f"{indent}}}")
            else:
                attrs = [f"label={_q(n.label)}", f"width={_f(n.width / 72)}", f"height={_f(n.height / 72)}",
                         f"pos={_q(pos(n.x, n.y) + '!')}", f"tooltip={_q(n.name)}"]
                if n.kind in (wire.NodeKind.META, wire.NodeKind.SERIES):
                    attrs.append('style="rounded,filled", fillcolor="#d0d9f0"')
                if n.extracted:
                    attrs.append("style=dashed")
                lines.append(f"{indent}{_q(n.name)} [{', '.join(attrs)}];")

    emit(None, "  ")
    for e in scene.edges:
        style = {wire.EdgeKind.CONTROL: "dashed", wire.EdgeKind.REFERENCE: "bold"}.get(e.kind, "solid")
        attrs = [f"style={style}", f"penwidth={_f(e.width)}"]
        if e.label:
            attrs.append(f"label={_q(e.label)}")
        lines.append(f"  {_q(e.source)} -> {_q(e.target)} [{', '.join(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def scene_to_json(scene: wire.Scene) -> str:
    return wire.to_json(scene)


EXPORTERS = {"json": scene_to_json, "svg": scene_to_svg, "dot": scene_to_dot}
