// Reads graphs as JSON lines on stdin: {"rankdir","nodesep","ranksep","edgesep",
// "nodes": [[id, w, h], ...], "edges": [[source, target], ...]}, lays each out with
// dagre 0.8.5 (multigraph) and prints one JSON line per graph:
// {"ms": layout time, "nodes": {id: [x, y]}, "edges": [[[x, y], ...], ...]} (edges in input order),
// or {"error": message} when dagre throws (e.g. stack overflow on huge graphs).
const dagre = require("dagre");
const readline = require("readline");
const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on("line", (line) => {
  if (!line.trim()) return;
  const spec = JSON.parse(line);
  try {
    process.stdout.write(JSON.stringify(layoutOne(spec)) + "\n");
  } catch (err) {
    process.stdout.write(JSON.stringify({ error: String(err) }) + "\n");
  }
});

function layoutOne(spec) {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  g.setGraph({ rankdir: spec.rankdir, nodesep: spec.nodesep, ranksep: spec.ranksep, edgesep: spec.edgesep });
  g.setDefaultEdgeLabel(() => ({}));
  for (const [id, w, h] of spec.nodes) g.setNode(id, { width: w, height: h });
  spec.edges.forEach(([s, t], i) => g.setEdge(s, t, {}, "e" + i));
  const t0 = process.hrtime.bigint();
  dagre.layout(g);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const nodes = {};
  for (const id of g.nodes()) { const n = g.node(id); nodes[id] = [n.x, n.y]; }
  const edges = spec.edges.map(([s, t], i) => (g.edge(s, t, "e" + i).points || []).map((p) => [p.x, p.y]));
  return { ms, nodes, edges };
}
