"""Dev-only mock of the plugin routes with a hand-crafted scene (not shipped, not a test).

    python frontend/dev/mock_server.py 8123   ->  http://127.0.0.1:8123/data/plugin/graph_explorer/
Serves the built bundle and fake graphs/scene/node/search/job/upload answers so the renderer can
be developed before the real routes exist. The "layout" is a naive column stack.
"""
import json
import re
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

STATIC = Path(__file__).resolve().parents[2] / "tb_graph_plugin" / "static"
PREFIX = "/data/plugin/graph_explorer/"

# name -> (op or None for group, children)
TREE = {
    "input": ("Placeholder", []),
    "conv1": (None, ["conv1/kernel", "conv1/bias", "conv1/Conv2D", "conv1/BiasAdd", "conv1/Relu"]),
    "conv1/kernel": ("VarHandleOp", []),
    "conv1/bias": ("VarHandleOp", []),
    "conv1/Conv2D": ("Conv2D", []),
    "conv1/BiasAdd": ("BiasAdd", []),
    "conv1/Relu": ("Relu", []),
    "dense": (None, ["dense/inner", "dense/MatMul", "dense/Softmax"]),
    "dense/inner": (None, ["dense/inner/a", "dense/inner/b"]),
    "dense/inner/a": ("Identity", []),
    "dense/inner/b": ("Mul", []),
    "dense/MatMul": ("MatMul", []),
    "dense/Softmax": ("Softmax", []),
    "add_[1-8]": ("Add", []),
    "loss": ("Mean", []),
    "init": ("NoOp", []),
}
TOP = ["input", "conv1", "dense", "add_[1-8]", "loss"]
DATA = [("input", "conv1/Conv2D"), ("conv1/kernel", "conv1/Conv2D"), ("conv1/Conv2D", "conv1/BiasAdd"),
        ("conv1/bias", "conv1/BiasAdd"), ("conv1/BiasAdd", "conv1/Relu"), ("conv1/Relu", "dense/inner/a"),
        ("dense/inner/a", "dense/inner/b"), ("dense/inner/b", "dense/MatMul"), ("dense/MatMul", "dense/Softmax"),
        ("dense/Softmax", "add_[1-8]"), ("add_[1-8]", "loss")]
CONTROL = [("init", "loss")]


def card(name):
    op, ch = TREE[name]
    return 1 if op else sum(card(c) for c in ch)


def layout(names, expanded, x0, y0, parent, out):
    """Stack names bottom-to-top from (x0, y0); returns (width, height)."""
    sizes = []
    for n in names:
        op, ch = TREE[n]
        if op is None and n in expanded:
            sub = []
            w, h = layout(ch, expanded, 0, 0, n, sub)
            sizes.append((n, w + 20, h + 30, sub))
        elif op is None:
            sizes.append((n, 90, 26, None))
        elif n.startswith("add_"):
            sizes.append((n, 70, 20, None))
        else:
            sizes.append((n, 60, 16, None))
    W = max(s[1] for s in sizes)
    y = y0
    total_h = sum(s[2] for s in sizes) + 30 * (len(sizes) - 1)
    y = y0 + total_h
    for n, w, h, sub in sizes:
        cx, cy = x0 + W / 2, y - h / 2
        op, _ = TREE[n]
        kind = "op" if op else "meta"
        if n.startswith("add_"):
            kind = "series"
        out.append(dict(name=n, label=n.split("/")[-1], kind=kind, x=cx, y=cy, width=w, height=h, parent=parent,
                        expanded=sub is not None, cardinality=card(n) if not n.startswith("add_") else 8, op=op,
                        device="/device:CPU:0" if "conv" in n else "/device:GPU:0", xla_cluster="cluster_1" if "dense" in n else None,
                        template="t1" if op is None else None, compute_time_us=float(len(n) * 100),
                        memory_bytes=len(n) * 1000, tpu_compatible="Relu" not in n, extracted=False, of=None))
        if sub is not None:
            for s in sub:
                s["x"] += cx - (w - 20) / 2
                s["y"] += y - h + 24
            out.extend(sub)
        y -= h + 30
    return W, total_h


def big_scene(n=20000):
    cols = 140
    nodes, edges = [], []
    for i in range(n):
        x, y = 40 + (i % cols) * 80, 30 + (i // cols) * 40
        nodes.append(dict(name=f"n{i}", label=f"op_{i}/MatMul", kind="op", x=x, y=y, width=60, height=16, parent=None,
                          expanded=False, cardinality=1, op="MatMul", device=f"/device:CPU:{i % 3}", xla_cluster=None,
                          template=None, compute_time_us=float(i % 100), memory_bytes=i % 1000, tpu_compatible=i % 2 == 0,
                          extracted=False, of=None))
        if i >= cols:
            edges.append(dict(source=f"n{i - cols}", target=f"n{i}", kind="data", width=1.0, points=[[x, y - 32], [x, y - 8]],
                              label="?x3", count=1))
    return dict(graph=dict(run="big", tag="g", kind="op", step=None), expanded=[], nodes=nodes, edges=edges,
                width=40 + cols * 80, height=30 + (n // cols + 1) * 40, stats={}, version=1)


def scene(expanded):
    nodes = []
    w, h = layout(TOP, set(expanded), 20, 20, None, nodes)
    nodes.append(dict(name="init", label="init", kind="op", x=w + 120, y=40, width=50, height=14, parent=None, expanded=False,
                      cardinality=1, op="NoOp", device=None, xla_cluster=None, template=None, compute_time_us=None,
                      memory_bytes=None, tpu_compatible=None, extracted=True, of=None))
    by = {n["name"]: n for n in nodes}

    def visible(name):
        while name not in by:
            name = name.rsplit("/", 1)[0] if "/" in name else None
            if name is None:
                return None
        return name
    edges, seen = [], set()
    for kind, pairs in (("data", DATA), ("control", CONTROL)):
        for s, t in pairs:
            vs, vt = visible(s), visible(t)
            if not vs or not vt or vs == vt or (vs, vt) in seen or vt.startswith(vs + "/") or vs.startswith(vt + "/"):
                continue
            seen.add((vs, vt))
            a, b = by[vs], by[vt]
            edges.append(dict(source=vs, target=vt, kind=kind, width=1.5 if kind == "data" else 1,
                              points=[[a["x"], a["y"] - a["height"] / 2], [(a["x"] + b["x"]) / 2, (a["y"] + b["y"]) / 2 + 5],
                                      [b["x"], b["y"] + b["height"] / 2]],
                              label="?×128" if kind == "data" else None, count=1))
    return dict(graph=dict(run="mock", tag="g", kind="op", step=None), expanded=sorted(expanded), nodes=nodes, edges=edges,
                width=w + 200, height=h + 40, stats={}, version=1)


JOBS = {}


class H(BaseHTTPRequestHandler):
    def send(self, code, body, mime="application/json"):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(code)
        self.send_header("Content-Type", mime)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        u = urlparse(self.path)
        q = {k: v[0] for k, v in parse_qs(u.query).items()}
        route = u.path[len(PREFIX):] if u.path.startswith(PREFIX) else None
        if route == "":
            return self.send(200, '<!DOCTYPE html><body><script type="module">import("./index.js").then(m=>m.render())</script></body>', "text/html")
        if route == "index.js":
            return self.send(200, (STATIC / "index.js").read_bytes(), "text/javascript")
        if route == "graphs":
            return self.send(200, json.dumps({"runs": [{"run": "mock", "tags": [{"tag": "g", "run_graph": True, "op_graph": False,
                             "conceptual_graph": True, "profile": False, "steps": []}]}, {"run": "keras_only", "tags": [
                             {"tag": "keras", "run_graph": False, "op_graph": False, "conceptual_graph": True, "profile": False, "steps": []}]}, {"run": "big", "tags": [{"tag": "g", "run_graph": True, "op_graph": False, "conceptual_graph": False, "profile": False, "steps": []}]}], "default": None, "data_location": "mock",
                             "version": 1}))
        if route == "scene":
            if q.get("run") == "big":
                return self.send(200, json.dumps(big_scene()))
            if q.get("run") == "broken":
                return self.send(400, "Malformed thing: broken run", "text/plain")
            key = q.get("expanded", "[]")
            if key not in JOBS:
                JOBS[key] = time.time()
                return self.send(202, json.dumps({"job_id": key, "state": "running", "stage": "layout", "progress": 0.3, "error": None, "version": 1}))
            return self.send(200, json.dumps(scene(json.loads(key))))
        if route == "job":
            return self.send(200, json.dumps({"job_id": q["id"], "state": "done", "stage": "layout", "progress": 1, "error": None, "version": 1}))
        if route == "node":
            n = q["name"]
            op = TREE.get(n, ("?", []))[0]
            ins = [{"name": s, "shape": "?×128", "kind": "data", "visible": True} for s, t in DATA if t == n]
            outs = [{"name": t, "shape": "?×128", "kind": "data", "visible": True} for s, t in DATA if s == n]
            return self.send(200, json.dumps({"name": n, "kind": "op" if op else "meta", "op": op, "device": "/device:CPU:0",
                                              "attrs": [{"key": "T", "value": "DT_FLOAT"}, {"key": "value", "elided_bytes": 40000}],
                                              "inputs": ins, "outputs": outs, "cardinality": card(n) if n in TREE else 1, "series": None,
                                              "template": None, "stats": {"compute_time_us": 1234.0}, "version": 1}))
        if route == "search":
            rx = re.compile(q.get("q", ""))
            hits = [{"name": n, "op": op, "kind": "op" if op else "meta"} for n, (op, _) in TREE.items()
                    if rx.search(n) and (not q.get("op") or q["op"] == op)]
            return self.send(200, json.dumps({"hits": hits}))
        self.send(404, json.dumps({"error": f"no route {u.path}"}))

    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(n)
        if b"node" not in body:
            return self.send(400, json.dumps({"error": "not a GraphDef: no node found"}))
        self.send(200, json.dumps({"graph": {"run": "__upload__", "tag": "up1", "kind": "op", "step": None}, "ops": 3, "version": 1}))


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1]) if len(sys.argv) > 1 else 8123), H).serve_forever()
