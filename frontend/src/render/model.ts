// SceneModel: the Scene the server laid out, indexed for drawing and hit-testing.
// build: O(nodes + edges). Queries touch only the grid cells of the asked rectangle,
// so drawing and hit-testing cost what is visible, not what exists.
import type { Scene, SceneEdge, SceneNode } from "../api/types";
import type { Slicer } from "./slicer";

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
  /** How many items the cells overlapping r list: those of the cells r covers wholly without a
   * look, the others when `inside(id)` (for items listed in one cell each, e.g. centre points). */
  count(r: Rect, inside: (id: number) => boolean): number {
    const a = this.cx(r.x0), b = this.cx(r.x1), c = this.cy(r.y0), d = this.cy(r.y1);
    let n = 0;
    for (let j = c; j <= d; j++)
      for (let i = a; i <= b; i++) {
        const list = this.cells.get(this.key(i, j));
        if (!list) continue;
        if (i > a && i < b && j > c && j < d) n += list.length;
        else for (const id of list) if (inside(id)) n++;
      }
    return n;
  }

  /** How many distinct ids the cells overlapping r list. */
  countDistinct(r: Rect, seen: Uint32Array, stamp: number): number {
    const a = this.cx(r.x0), b = this.cx(r.x1), c = this.cy(r.y0), d = this.cy(r.y1);
    let n = 0;
    for (let j = c; j <= d; j++)
      for (let i = a; i <= b; i++) {
        const list = this.cells.get(this.key(i, j));
        if (!list) continue;
        for (const id of list) {
          if (seen[id] === stamp) continue;
          seen[id] = stamp;
          n++;
        }
      }
    return n;
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

/** The parts of a SceneModel, computed by `SceneModel.build` in time slices. */
interface Parts {
  nodes: SceneNode[];
  depth: Int32Array;
  byName: Map<string, number>;
  bounds: Rect;
  nodeGrid: SpatialGrid;
  centreGrid: SpatialGrid;
  edgeGrid: SpatialGrid;
  edgeBox: Rect[];
  inEdges: number[][];
  outEdges: number[][];
  reversedEdges: number;
  inferredNodes: number;
}

const EVERY = 511; // loops ask the slicer whether to yield every 512 items

export class SceneModel {
  readonly nodes: SceneNode[];
  readonly edges: SceneEdge[];
  readonly byName: Map<string, number>;
  /** depth of each node in the expanded tree (0 = top level); drawing goes parents first */
  readonly depth: Int32Array;
  readonly edgeBox: Rect[];
  readonly bounds: Rect;
  private readonly nodeGrid: SpatialGrid;
  /** each node listed once, in the cell of its centre (counting) */
  private readonly centreGrid: SpatialGrid;
  private readonly edgeGrid: SpatialGrid;
  private nodeSeen: Uint32Array;
  private edgeSeen: Uint32Array;
  private stamp = 1;
  /** incoming / outgoing edge indices per node index */
  readonly inEdges: number[][];
  readonly outEdges: number[][];
  /** edges laid out against the flow (cycles) and groups inferred rather than scopes: counted
   * once here so that warnings and legend need no pass over a big scene */
  readonly reversedEdges: number;
  readonly inferredNodes: number;

  private constructor(readonly scene: Scene, p: Parts) {
    this.edges = scene.edges;
    this.nodes = p.nodes;
    this.depth = p.depth;
    this.byName = p.byName;
    this.bounds = p.bounds;
    this.nodeGrid = p.nodeGrid;
    this.centreGrid = p.centreGrid;
    this.edgeGrid = p.edgeGrid;
    this.edgeBox = p.edgeBox;
    this.inEdges = p.inEdges;
    this.outEdges = p.outEdges;
    this.reversedEdges = p.reversedEdges;
    this.inferredNodes = p.inferredNodes;
    this.nodeSeen = new Uint32Array(p.nodes.length);
    this.edgeSeen = new Uint32Array(scene.edges.length);
  }

  /**
   * Indexes a scene: O(nodes + edges), in slices of `slicer.budgetMs` so a 50k-node scene
   * never blocks the main thread for long. Node order = drawing order: parents first
   * (a stable counting sort by depth), so a numeric sort of ids is a draw sort.
   */
  static async build(scene: Scene, slicer: Slicer): Promise<SceneModel> {
    const src = scene.nodes;
    const n = src.length;
    const names = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      names.set(src[i].name, i);
      if ((i & EVERY) === 0 && slicer.due()) await slicer.yield();
    }
    const depth0 = new Int32Array(n).fill(-1);
    let maxDepth = 0;
    for (let i = 0; i < n; i++) {
      if (depth0[i] < 0) {
        // walk up to the first node whose depth is known (or the top), then fill the path
        const path: number[] = [];
        let known = -1;
        for (let j = i; path.length <= n; ) {
          if (depth0[j] >= 0) {
            known = depth0[j];
            break;
          }
          path.push(j);
          const p = src[j].parent;
          const pj = p === null ? undefined : names.get(p);
          if (pj === undefined) break;
          j = pj;
        }
        let d = known + 1;
        for (let q = path.length - 1; q >= 0; q--) if (depth0[path[q]] < 0) depth0[path[q]] = d++;
      }
      maxDepth = Math.max(maxDepth, depth0[i]);
      if ((i & EVERY) === 0 && slicer.due()) await slicer.yield();
    }
    const counts = new Int32Array(maxDepth + 2);
    for (let i = 0; i < n; i++) counts[depth0[i] + 1]++;
    for (let d = 1; d < counts.length; d++) counts[d] += counts[d - 1];
    const nodes: SceneNode[] = new Array(n);
    const depth = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const at = counts[depth0[i]]++;
      nodes[at] = src[i];
      depth[at] = depth0[i];
    }
    const byName = new Map<string, number>();
    let x0 = 0, y0 = 0, x1 = scene.width || 1, y1 = scene.height || 1;
    let inferredNodes = 0;
    for (let i = 0; i < n; i++) {
      const node = nodes[i];
      byName.set(node.name, i);
      if (node.inferred) inferredNodes++;
      x0 = Math.min(x0, node.x - node.width / 2);
      y0 = Math.min(y0, node.y - node.height / 2);
      x1 = Math.max(x1, node.x + node.width / 2);
      y1 = Math.max(y1, node.y + node.height / 2);
      if ((i & EVERY) === 0 && slicer.due()) await slicer.yield();
    }
    const cell = Math.max(64, Math.sqrt(((x1 - x0) * (y1 - y0)) / Math.max(1, n)) * 2);
    const nodeGrid = new SpatialGrid(cell, x1 + 1);
    const edgeGrid = new SpatialGrid(cell, x1 + 1);
    const centreGrid = new SpatialGrid(cell, x1 + 1);
    for (let i = 0; i < n; i++) {
      nodeGrid.insert(i, nodeRect(nodes[i]));
      centreGrid.insert(i, { x0: nodes[i].x, y0: nodes[i].y, x1: nodes[i].x, y1: nodes[i].y });
      if ((i & EVERY) === 0 && slicer.due()) await slicer.yield();
    }
    const inEdges: number[][] = new Array(n);
    const outEdges: number[][] = new Array(n);
    for (let i = 0; i < n; i++) {
      inEdges[i] = [];
      outEdges[i] = [];
    }
    const edges = scene.edges;
    const edgeBox: Rect[] = new Array(edges.length);
    let reversedEdges = 0;
    for (let i = 0; i < edges.length; i++) {
      const e = edges[i];
      if ((e as { reversed?: boolean }).reversed) reversedEdges++;
      let ex0 = Infinity, ey0 = Infinity, ex1 = -Infinity, ey1 = -Infinity;
      for (const [px, py] of e.points) {
        ex0 = Math.min(ex0, px); ey0 = Math.min(ey0, py);
        ex1 = Math.max(ex1, px); ey1 = Math.max(ey1, py);
      }
      const box = e.points.length ? { x0: ex0, y0: ey0, x1: ex1, y1: ey1 } : { x0: 0, y0: 0, x1: 0, y1: 0 };
      if (e.points.length) edgeGrid.insert(i, box);
      const s = byName.get(e.source), t = byName.get(e.target);
      if (s !== undefined) outEdges[s].push(i);
      if (t !== undefined) inEdges[t].push(i);
      edgeBox[i] = box;
      if ((i & EVERY) === 0 && slicer.due()) await slicer.yield();
    }
    return new SceneModel(scene, { nodes, depth, byName, bounds: { x0, y0, x1, y1 }, nodeGrid, centreGrid, edgeGrid, edgeBox, inEdges, outEdges,
      reversedEdges, inferredNodes });
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

  /** How many nodes have their centre in r: O(cells of r + nodes of its border cells). */
  countIn(r: Rect): number {
    const b = this.bounds;
    if (r.x0 <= b.x0 && r.y0 <= b.y0 && r.x1 >= b.x1 && r.y1 >= b.y1) return this.nodes.length;
    return this.centreGrid.count(r, (i) => {
      const n = this.nodes[i];
      return n.x >= r.x0 && n.x <= r.x1 && n.y >= r.y0 && n.y <= r.y1;
    });
  }

  /** The cost of drawing r, ~ microseconds: its nodes, and its edges, which cost ~10x more. */
  weightIn(r: Rect): number {
    return this.countIn(r) + 10 * this.edgeGrid.countDistinct(r, this.edgeSeen, ++this.stamp);
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
