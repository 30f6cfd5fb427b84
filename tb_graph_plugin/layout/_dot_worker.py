"""Worker process running Graphviz dot (pygraphviz) on DOT sources sent over stdin.

Run as a script (``python _dot_worker.py``) so it imports nothing but pygraphviz. Protocol,
repeated: 8-byte big-endian length + UTF-8 DOT source in; 8-byte length + UTF-8 JSON out:
``{"bb": [llx, lly, urx, ury], "nodes": {name: [x, y]}, "edges": {id: "pos"}}`` (points,
Graphviz y-up) or ``{"error": "..."}``. Abandoned by killing the process on a timeout.

Before it reads its first source the worker lays out a two-node graph (:data:`WARM_UP`): the
import of pygraphviz and Graphviz's first layout (its plugins and configuration loaded, ~20-60
ms) then happen while the worker waits, not in a graph's first view (``dot.prestart`` starts
the worker long before that). The warm-up graph is written as ``dot.to_dot_source`` writes, with
no labels: a labelled one made Graphviz set up its fonts, after which every layout took longer
(the 26 layouts of a 141k-op step's first expand, ~15-20 ms more).
"""

import json
import struct
import sys


def _answer(src: str) -> dict:
    import pygraphviz

    a = pygraphviz.AGraph(string=src)
    a.layout(prog="dot")
    bb = [float(v) for v in a.graph_attr["bb"].split(",")]
    nodes = {}
    for n in a.nodes_iter():
        x, y = n.attr["pos"].split(",")[:2]
        nodes[str(n)] = [float(x), float(y)]
    edges = {}
    for e in a.edges_iter():
        edges[e.attr["id"]] = e.attr["pos"]
    return {"bb": bb, "nodes": nodes, "edges": edges}


WARM_UP = ('digraph G { graph [rankdir=BT]; node [shape=box, fixedsize=true, label=""]; edge [dir=none]; '
           'n0 [width=1, height=0.3]; n1 [width=1, height=0.3]; n0 -> n1 [id=e0]; }')


def main() -> None:
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    try:
        _answer(WARM_UP)
    except Exception:  # noqa: BLE001 - the first real source reports the same failure
        pass
    while True:
        head = inp.read(8)
        if len(head) < 8:
            return
        src = inp.read(struct.unpack(">Q", head)[0]).decode("utf-8")
        try:
            body = _answer(src)
        except Exception as exc:  # noqa: BLE001 - reported to the parent
            body = {"error": f"{type(exc).__name__}: {exc}"}
        data = json.dumps(body).encode("utf-8")
        out.write(struct.pack(">Q", len(data)) + data)
        out.flush()


if __name__ == "__main__":
    main()
