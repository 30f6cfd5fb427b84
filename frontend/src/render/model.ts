// SceneModel: the Scene the server laid out, indexed for drawing and hit-testing.
// build: O(nodes + edges). Queries touch only the grid cells of the asked rectangle,
// so drawing and hit-testing cost what is visible, not what exists.
import type { Scene, SceneEdge, SceneNode } from "../api/types";

export interface Rect {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** A uniform grid over world space; each item is listed in every cell its box touches. */
export class SpatialGrid {
  private cells = new Map<number, number[]>();
  private readonly cols: number;
  constructor(private readonly cell: number, width: number) {
    this.cols = Math.max(1, Math.ceil((width + 2 * cell) / cell)) + 2;
  }
  private key(cx: number, cy: number): number {
    return cy * this.cols + cx;
  }
  private cx(x: number): number {
    return Math.max(0, Math.min(this.cols - 1, Math.floor(x / this.cell) + 1));
  }
  private cy(y: number): number {
    return Math.max(0, Math.floor(y / this.cell) + 1);
  }
  insert(id: number, r: Rect): void {
    const a = this.cx(r.x0), b = this.cx(r.x1), c = this.cy(r.y0), d = this.cy(r.y1);
    for (let j = c; j <= d; j++)
      for (let i = a; i <= b; i++) {
        const k = this.key(i, j);
        let list = this.cells.get(k);
        if (!list) this.cells.set(k, (list = []));
        list.push(id);
      }
  }
  /** Ids whose cells overlap r (may contain duplicates when the seen array is not used). */
  query(r: Rect, seen: Uint32Array, stamp: number, out: number[]): void {
    const a = this.cx(r.x0), b = this.cx(r.x1), c = this.cy(r.y0), d = this.cy(r.y1);
    for (let j = c; j <= d; j++)
      for (let i = a; i <= b; i++) {
        const list = this.cells.get(this.key(i, j));
        if (!list) continue;
        for (const id of list) {
          if (seen[id] === stamp) continue;
          seen[id] = stamp;
          out.push(id);
        }
      }
  }
}

export class SceneModel {
  readonly nodes: SceneNode[];
  readonly edges: SceneEdge[];
  readonly byName = new Map<string, number>();
  /** depth of each node in the expanded tree (0 = top level); drawing goes parents first */
  readonly depth: Int32Array;
  readonly edgeBox: Rect[];
  readonly bounds: Rect;
  private readonly nodeGrid: SpatialGrid;
  private readonly edgeGrid: SpatialGrid;
  private nodeSeen: Uint32Array;
  private edgeSeen: Uint32Array;
  private stamp = 1;
  /** incoming / outgoing edge indices per node index */
  readonly inEdges: number[][];
  readonly outEdges: number[][];

  constructor(readonly scene: Scene) {
    this.edges = scene.edges;
    const n = scene.nodes.length;
    const names = new Map<string, number>();
    scene.nodes.forEach((node, i) => names.set(node.name, i));
    const depth0 = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      let d = 0;
      let p = scene.nodes[i].parent;
      while (p !== null && d < 1000) {
        const pi = names.get(p);
        if (pi === undefined) break;
        d++;
        p = scene.nodes[pi].parent;
      }
      depth0[i] = d;
    }
    // index order = drawing order (parents first), so a numeric sort of ids is a draw sort
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => depth0[a] - depth0[b] || a - b);
    this.nodes = order.map((i) => scene.nodes[i]);
    this.depth = new Int32Array(n);
    order.forEach((old, i) => (this.depth[i] = depth0[old]));
    this.nodes.forEach((node, i) => this.byName.set(node.name, i));
    let x0 = 0, y0 = 0, x1 = scene.width || 1, y1 = scene.height || 1;
    for (const node of this.nodes) {
      x0 = Math.min(x0, node.x - node.width / 2);
      y0 = Math.min(y0, node.y - node.height / 2);
      x1 = Math.max(x1, node.x + node.width / 2);
      y1 = Math.max(y1, node.y + node.height / 2);
    }
    this.bounds = { x0, y0, x1, y1 };
    const cell = Math.max(64, Math.sqrt(((x1 - x0) * (y1 - y0)) / Math.max(1, n)) * 2);
    this.nodeGrid = new SpatialGrid(cell, x1 + 1);
    this.edgeGrid = new SpatialGrid(cell, x1 + 1);
    this.nodes.forEach((node, i) => this.nodeGrid.insert(i, nodeRect(node)));
    this.inEdges = this.nodes.map(() => []);
    this.outEdges = this.nodes.map(() => []);
    this.edgeBox = this.edges.map((e, i) => {
      let ex0 = Infinity, ey0 = Infinity, ex1 = -Infinity, ey1 = -Infinity;
      for (const [px, py] of e.points) {
        ex0 = Math.min(ex0, px); ey0 = Math.min(ey0, py);
        ex1 = Math.max(ex1, px); ey1 = Math.max(ey1, py);
      }
      const box = e.points.length ? { x0: ex0, y0: ey0, x1: ex1, y1: ey1 } : { x0: 0, y0: 0, x1: 0, y1: 0 };
      if (e.points.length) this.edgeGrid.insert(i, box);
      const s = this.byName.get(e.source), t = this.byName.get(e.target);
      if (s !== undefined) this.outEdges[s].push(i);
      if (t !== undefined) this.inEdges[t].push(i);
      return box;
    });
    this.nodeSeen = new Uint32Array(n);
    this.edgeSeen = new Uint32Array(this.edges.length);
  }

  node(name: string): SceneNode | undefined {
    const i = this.byName.get(name);
    return i === undefined ? undefined : this.nodes[i];
  }

  /** Node indices overlapping r, parents before children. */
  nodesIn(r: Rect): Uint32Array {
    const out: number[] = [];
    this.nodeGrid.query(r, this.nodeSeen, ++this.stamp, out);
    let m = 0;
    for (const i of out) {
      const n = this.nodes[i];
      if (n.x - n.width / 2 <= r.x1 && n.x + n.width / 2 >= r.x0 && n.y - n.height / 2 <= r.y1 && n.y + n.height / 2 >= r.y0) out[m++] = i;
    }
    return Uint32Array.from(out.slice(0, m)).sort();
  }

  edgesIn(r: Rect): number[] {
    const out: number[] = [];
    this.edgeGrid.query(r, this.edgeSeen, ++this.stamp, out);
    let m = 0;
    for (const i of out) if (overlaps(this.edgeBox[i], r)) out[m++] = i;
    out.length = m;
    return out;
  }

  /** The deepest node containing the point (children are drawn over parents). */
  hit(x: number, y: number, skip?: (i: number) => boolean): number {
    const ids = this.nodesIn({ x0: x - 1, y0: y - 1, x1: x + 1, y1: y + 1 });
    let best = -1;
    for (const i of ids) {
      if (skip && skip(i)) continue;
      const n = this.nodes[i];
      if (Math.abs(x - n.x) <= n.width / 2 + 2 && Math.abs(y - n.y) <= n.height / 2 + 2) {
        if (best < 0 || this.depth[i] >= this.depth[best]) best = i;
      }
    }
    return best;
  }
}

export function nodeRect(n: SceneNode): Rect {
  return { x0: n.x - n.width / 2, y0: n.y - n.height / 2, x1: n.x + n.width / 2, y1: n.y + n.height / 2 };
}

export function overlaps(a: Rect, b: Rect): boolean {
  return a.x0 <= b.x1 && a.x1 >= b.x0 && a.y0 <= b.y1 && a.y1 >= b.y0;
}
