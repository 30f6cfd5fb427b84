// Trace inputs / outputs: everything upstream and/or downstream of the selected node over the
// drawn edges (so a path through a collapsed group runs through the group). An embedding
// reached on the way brings its owner (`of`) along.
import type { SceneModel } from "../render/model";

export type TraceMode = "off" | "inputs" | "outputs" | "both";

export interface Trace {
  nodes: Set<string>; // names, the selection included
  edges: Set<number>; // indices into model.edges
}

/** The traced nodes and edges from `selected`, or null (trace off, nothing selected, not drawn). */
export function traceFrom(m: SceneModel | null, selected: string | null, mode: TraceMode): Trace | null {
  if (!m || !selected || mode === "off") return null;
  const start = m.byName.get(selected);
  if (start === undefined) return null;
  const nodes = new Set<string>([selected]);
  const edges = new Set<number>();
  const walk = (up: boolean) => {
    const queue = [start];
    const seen = new Set<number>(queue);
    while (queue.length) {
      const i = queue.pop()!;
      for (const ei of up ? m.edgesInto(i) : m.edgesOutOf(i)) {
        edges.add(ei);
        const e = m.edges[ei];
        const other = m.byName.get(up ? e.source : e.target);
        if (other === undefined || seen.has(other)) continue;
        seen.add(other);
        nodes.add(m.nodes[other].name);
        queue.push(other);
        const of = m.nodes[other].of;
        const ofi = of ? m.byName.get(of) : undefined;
        if (ofi !== undefined && !seen.has(ofi)) {
          seen.add(ofi);
          nodes.add(of!);
          queue.push(ofi);
        }
      }
    }
  };
  if (mode === "inputs" || mode === "both") walk(true);
  if (mode === "outputs" || mode === "both") walk(false);
  return { nodes, edges };
}
