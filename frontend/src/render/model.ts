// SceneModel: the Scene the server laid out, indexed for drawing and hit-testing. The index
// (scene_index.ts: typed arrays) is built by the scene worker off the main thread, or here in
// time slices for a scene parsed here. Queries touch only the grid cells of the asked rectangle,
// so drawing and hit-testing cost what is visible, not what exists.
import type { Scene, SceneEdge, SceneNode } from "../api/types";
import { cellX, cellY, indexSteps, type GridIndex, type Rect, type SceneIndex } from "./scene_index";
import type { Slicer } from "./slicer";

export type { Rect };

const EVERY = 511; // loops ask the slicer whether to yield every 512 items

/** Queries over one packed grid of a SceneIndex. `seen`/`stamp` drop the duplicates of an item
 * listed in several cells. */
class Grid {
  constructor(private readonly g: GridIndex) {}

  /** Calls `visit(id)` for each item listed in the cells overlapping r (duplicates included);
   * `whole` says whether the cell lies strictly inside r's cell range. */
  private each(r: Rect, visit: (id: number, whole: boolean) => void): void {
    const g = this.g;
    const a = cellX(g, r.x0), b = cellX(g, r.x1), c = cellY(g, r.y0), d = cellY(g, r.y1);
    for (let j = c; j <= d; j++)
      for (let i = a; i <= b; i++) {
        const k = j * g.cols + i;
        const whole = i > a && i < b && j > c && j < d;
        for (let q = g.starts[k], end = g.starts[k + 1]; q < end; q++) visit(g.items[q], whole);
      }
  }

  /** How many items the cells overlapping r list: those of the cells r covers wholly without a
   * look, the others when `inside(id)` (for items listed in one cell each, e.g. centre points). */
  count(r: Rect, inside: (id: number) => boolean): number {
    let n = 0;
    this.each(r, (id, whole) => {
      if (whole || inside(id)) n++;
    });
    return n;
  }

  /** Distinct ids listed in the cells overlapping r, appended to `out` (when given); their count. */
  distinct(r: Rect, seen: Uint32Array, stamp: number, out?: number[]): number {
    let n = 0;
    this.each(r, (id) => {
      if (seen[id] === stamp) return;
      seen[id] = stamp;
      n++;
      out?.push(id);
    });
    return n;
  }
}

export class SceneModel {
  /** the scene's nodes in drawing order: parents first, so a numeric sort of ids is a draw sort */
  readonly nodes: SceneNode[];
  readonly edges: SceneEdge[];
  readonly byName: Map<string, number>;
  /** depth of each node in the expanded tree (0 = top level) */
  readonly depth: Int32Array;
  /** x0, y0, x1, y1 of each edge's points */
  readonly edgeBox: Float64Array;
  readonly bounds: Rect;
  private readonly nodeGrid: Grid;
  /** each node listed once, in the cell of its centre (counting) */
  private readonly centreGrid: Grid;
  private readonly edgeGrid: Grid;
  private nodeSeen: Uint32Array;
  private edgeSeen: Uint32Array;
  private stamp = 1;
  /** edges laid out against the flow (cycles) and groups inferred rather than scopes: counted
   * once here so that warnings and legend need no pass over a big scene */
  readonly reversedEdges: number;
  readonly inferredNodes: number;

  private constructor(readonly scene: Scene, private readonly ix: SceneIndex, nodes: SceneNode[], byName: Map<string, number>) {
    this.edges = scene.edges;
    this.nodes = nodes;
    this.byName = byName;
    this.depth = ix.depth;
    this.bounds = ix.bounds;
    this.edgeBox = ix.edgeBox;
    this.nodeGrid = new Grid(ix.nodeGrid);
    this.centreGrid = new Grid(ix.centreGrid);
    this.edgeGrid = new Grid(ix.edgeGrid);
    this.reversedEdges = ix.reversedEdges;
    this.inferredNodes = ix.inferredNodes;
    this.nodeSeen = new Uint32Array(nodes.length);
    this.edgeSeen = new Uint32Array(scene.edges.length);
  }

  /**
   * Indexes a scene on this thread, in slices of `slicer.budgetMs` so a 50k-node scene never
   * blocks the main thread for long (a scene from the worker comes with its index: `fromIndex`).
   */
  static async build(scene: Scene, slicer: Slicer): Promise<SceneModel> {
    const steps = indexSteps(scene);
    for (;;) {
      const r = steps.next();
      if (r.done) return SceneModel.fromIndex(scene, r.value, slicer);
      if (slicer.due()) await slicer.yield();
    }
  }

  /** The model of a scene and its index (built by the scene worker): the nodes in drawing order
   * and the name map, O(nodes), in slices. */
  static async fromIndex(scene: Scene, ix: SceneIndex, slicer: Slicer): Promise<SceneModel> {
    const src = scene.nodes;
    const n = src.length;
    const nodes: SceneNode[] = new Array(n);
    const byName = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      const node = src[ix.order[i]];
      nodes[i] = node;
      byName.set(node.name, i);
      if ((i & EVERY) === 0 && slicer.due()) await slicer.yield();
    }
    return new SceneModel(scene, ix, nodes, byName);
  }

  node(name: string): SceneNode | undefined {
    const i = this.byName.get(name);
    return i === undefined ? undefined : this.nodes[i];
  }

  /** Indices of the edges into / out of node i, in edge order. */
  edgesInto(i: number): Uint32Array {
    return this.ix.inItems.subarray(this.ix.inStarts[i], this.ix.inStarts[i + 1]);
  }

  edgesOutOf(i: number): Uint32Array {
    return this.ix.outItems.subarray(this.ix.outStarts[i], this.ix.outStarts[i + 1]);
  }

  /** Width + height of edge i's box, world units. */
  edgeExtent(i: number): number {
    const b = this.edgeBox;
    return b[4 * i + 2] - b[4 * i] + b[4 * i + 3] - b[4 * i + 1];
  }

  /** Node indices overlapping r, parents before children. */
  nodesIn(r: Rect): Uint32Array {
    const out: number[] = [];
    this.nodeGrid.distinct(r, this.nodeSeen, ++this.stamp, out);
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
    return this.countIn(r) + 10 * this.edgeGrid.distinct(r, this.edgeSeen, ++this.stamp);
  }

  edgesIn(r: Rect): number[] {
    const out: number[] = [];
    this.edgeGrid.distinct(r, this.edgeSeen, ++this.stamp, out);
    const b = this.edgeBox;
    let m = 0;
    for (const i of out) if (b[4 * i] <= r.x1 && b[4 * i + 2] >= r.x0 && b[4 * i + 1] <= r.y1 && b[4 * i + 3] >= r.y0) out[m++] = i;
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
