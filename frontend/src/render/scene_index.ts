// SceneIndex: everything SceneModel needs to draw and hit-test a scene, as typed arrays, so the
// scene worker can build it off the main thread and hand it over without a copy (transferred
// buffers), and the main thread allocates nothing per node or edge for it (no garbage to collect
// while a 90k-node scene arrives). Built by `indexSteps`, a generator that yields every 512
// items: the worker runs it to the end at once, the main thread (a scene it parsed itself, the
// compare view) in time slices.
//
// Post-conditions: `order` lists the scene's node indices in drawing order (parents first: a
// stable sort by depth in the expanded tree); every other per-node array is in that order, and
// every node id below is a drawing position. A grid lists an item in every cell its box touches
// (the centre grid: the cell of the node's centre only). In/out edges of a node are the edge
// indices whose target/source it is, in edge order.
import type { Scene, SceneNode } from "../api/types";

export interface Rect {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** A uniform grid over world space, its cells' item lists packed (CSR): cell k lists
 * items[starts[k] .. starts[k + 1]). */
export interface GridIndex {
  cell: number;
  cols: number;
  rows: number;
  starts: Uint32Array;
  items: Uint32Array;
}

export interface SceneIndex {
  order: Uint32Array;
  depth: Int32Array;
  bounds: Rect;
  nodeGrid: GridIndex;
  centreGrid: GridIndex;
  edgeGrid: GridIndex;
  /** x0, y0, x1, y1 of each edge's points (zeros without points) */
  edgeBox: Float64Array;
  inStarts: Uint32Array;
  inItems: Uint32Array;
  outStarts: Uint32Array;
  outItems: Uint32Array;
  reversedEdges: number;
  inferredNodes: number;
}

const EVERY = 511; // yield every 512 items

/** The buffers of an index, for postMessage's transfer list. */
export function indexBuffers(ix: SceneIndex): ArrayBuffer[] {
  const arrays = [ix.order, ix.depth, ix.edgeBox, ix.inStarts, ix.inItems, ix.outStarts, ix.outItems,
    ix.nodeGrid.starts, ix.nodeGrid.items, ix.centreGrid.starts, ix.centreGrid.items, ix.edgeGrid.starts, ix.edgeGrid.items];
  return arrays.map((a) => a.buffer as ArrayBuffer);
}

/** The whole index at once (the scene worker). */
export function indexScene(scene: Scene): SceneIndex {
  const steps = indexSteps(scene);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

// -- grid cells (the same arithmetic for building and querying) ---------------------------------

export function cellX(g: GridIndex, x: number): number {
  return Math.max(0, Math.min(g.cols - 1, Math.floor(x / g.cell) + 1));
}

export function cellY(g: GridIndex, y: number): number {
  return Math.max(0, Math.min(g.rows - 1, Math.floor(y / g.cell) + 1));
}

function emptyGrid(cell: number, bounds: Rect): GridIndex {
  const span = (v: number) => Math.max(1, Math.ceil((v + 1 + 2 * cell) / cell)) + 2;
  return { cell, cols: span(bounds.x1), rows: span(bounds.y1), starts: new Uint32Array(0), items: new Uint32Array(0) };
}

/** Fills `g` with items 0..n-1, item i covering the box `box(i)` writes into `r`. Two passes:
 * count per cell, then place. */
function* fillGrid(g: GridIndex, n: number, box: (i: number, r: Rect) => boolean): Generator<void> {
  const r: Rect = { x0: 0, y0: 0, x1: 0, y1: 0 };
  const counts = new Uint32Array(g.cols * g.rows + 1);
  for (let pass = 0; pass < 2; pass++) {
    for (let i = 0; i < n; i++) {
      if (box(i, r)) {
        const a = cellX(g, r.x0), b = cellX(g, r.x1), c = cellY(g, r.y0), d = cellY(g, r.y1);
        for (let j = c; j <= d; j++)
          for (let k = a; k <= b; k++) {
            const cellIndex = j * g.cols + k;
            if (pass === 0) counts[cellIndex + 1]++;
            else g.items[counts[cellIndex]++] = i;
          }
      }
      if ((i & EVERY) === 0) yield;
    }
    if (pass === 0) {
      for (let k = 1; k < counts.length; k++) counts[k] += counts[k - 1];
      g.starts = counts.slice();
      g.items = new Uint32Array(counts[counts.length - 1]);
    }
  }
}

/** CSR lists of `n` keys from (key, value) pairs given as `keyOf(i)` for i < m (-1: none). */
function packLists(n: number, m: number, keyOf: (i: number) => number): [Uint32Array, Uint32Array] {
  const starts = new Uint32Array(n + 1);
  for (let i = 0; i < m; i++) {
    const k = keyOf(i);
    if (k >= 0) starts[k + 1]++;
  }
  for (let k = 1; k <= n; k++) starts[k] += starts[k - 1];
  const at = starts.slice(0, n);
  const items = new Uint32Array(starts[n]);
  for (let i = 0; i < m; i++) {
    const k = keyOf(i);
    if (k >= 0) items[at[k]++] = i;
  }
  return [starts, items];
}

// -- the index ----------------------------------------------------------------------------------

/** Depth of each node in the expanded tree (0 = top level), in the scene's node order. */
function* depths(src: SceneNode[], names: Map<string, number>, out: Int32Array): Generator<void> {
  const n = src.length;
  out.fill(-1);
  for (let i = 0; i < n; i++) {
    if (out[i] < 0) {
      // walk up to the first node whose depth is known (or the top), then fill the path
      const path: number[] = [];
      let known = -1;
      for (let j = i; path.length <= n; ) {
        if (out[j] >= 0) {
          known = out[j];
          break;
        }
        path.push(j);
        const p = src[j].parent;
        const pj = p === null ? undefined : names.get(p);
        if (pj === undefined) break;
        j = pj;
      }
      let d = known + 1;
      for (let q = path.length - 1; q >= 0; q--) if (out[path[q]] < 0) out[path[q]] = d++;
    }
    if ((i & EVERY) === 0) yield;
  }
}

export function* indexSteps(scene: Scene): Generator<void, SceneIndex> {
  const src = scene.nodes;
  const n = src.length;
  const names = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    names.set(src[i].name, i);
    if ((i & EVERY) === 0) yield;
  }
  const depth0 = new Int32Array(n);
  yield* depths(src, names, depth0);
  let maxDepth = 0;
  for (let i = 0; i < n; i++) maxDepth = Math.max(maxDepth, depth0[i]);
  const counts = new Int32Array(maxDepth + 2);
  for (let i = 0; i < n; i++) counts[depth0[i] + 1]++;
  for (let d = 1; d < counts.length; d++) counts[d] += counts[d - 1];
  const order = new Uint32Array(n);
  const depth = new Int32Array(n);
  const position = new Int32Array(n); // scene index -> drawing position
  for (let i = 0; i < n; i++) {
    const at = counts[depth0[i]]++;
    order[at] = i;
    depth[at] = depth0[i];
    position[i] = at;
  }
  let x0 = 0, y0 = 0, x1 = scene.width || 1, y1 = scene.height || 1;
  let inferredNodes = 0;
  for (let i = 0; i < n; i++) {
    const node = src[i];
    if (node.inferred) inferredNodes++;
    x0 = Math.min(x0, node.x - node.width / 2);
    y0 = Math.min(y0, node.y - node.height / 2);
    x1 = Math.max(x1, node.x + node.width / 2);
    y1 = Math.max(y1, node.y + node.height / 2);
    if ((i & EVERY) === 0) yield;
  }
  const bounds = { x0, y0, x1, y1 };
  const cell = Math.max(64, Math.sqrt(((x1 - x0) * (y1 - y0)) / Math.max(1, n)) * 2);
  const nodeAt = (i: number) => src[order[i]];
  const nodeGrid = emptyGrid(cell, bounds);
  yield* fillGrid(nodeGrid, n, (i, r) => {
    const v = nodeAt(i);
    r.x0 = v.x - v.width / 2; r.y0 = v.y - v.height / 2; r.x1 = v.x + v.width / 2; r.y1 = v.y + v.height / 2;
    return true;
  });
  const centreGrid = emptyGrid(cell, bounds);
  yield* fillGrid(centreGrid, n, (i, r) => {
    const v = nodeAt(i);
    r.x0 = r.x1 = v.x; r.y0 = r.y1 = v.y;
    return true;
  });
  const edges = scene.edges;
  const m = edges.length;
  const edgeBox = new Float64Array(4 * m);
  const sourceOf = new Int32Array(m).fill(-1);
  const targetOf = new Int32Array(m).fill(-1);
  let reversedEdges = 0;
  for (let i = 0; i < m; i++) {
    const e = edges[i];
    if ((e as { reversed?: boolean }).reversed) reversedEdges++;
    if (e.points.length) {
      let ex0 = Infinity, ey0 = Infinity, ex1 = -Infinity, ey1 = -Infinity;
      for (const [px, py] of e.points) {
        ex0 = Math.min(ex0, px); ey0 = Math.min(ey0, py);
        ex1 = Math.max(ex1, px); ey1 = Math.max(ey1, py);
      }
      edgeBox[4 * i] = ex0; edgeBox[4 * i + 1] = ey0; edgeBox[4 * i + 2] = ex1; edgeBox[4 * i + 3] = ey1;
    }
    const s = names.get(e.source), t = names.get(e.target);
    if (s !== undefined) sourceOf[i] = position[s];
    if (t !== undefined) targetOf[i] = position[t];
    if ((i & EVERY) === 0) yield;
  }
  const edgeGrid = emptyGrid(cell, bounds);
  yield* fillGrid(edgeGrid, m, (i, r) => {
    if (!edges[i].points.length) return false;
    r.x0 = edgeBox[4 * i]; r.y0 = edgeBox[4 * i + 1]; r.x1 = edgeBox[4 * i + 2]; r.y1 = edgeBox[4 * i + 3];
    return true;
  });
  const [inStarts, inItems] = packLists(n, m, (i) => targetOf[i]);
  const [outStarts, outItems] = packLists(n, m, (i) => sourceOf[i]);
  return { order, depth, bounds, nodeGrid, centreGrid, edgeGrid, edgeBox, inStarts, inItems, outStarts, outItems,
    reversedEdges, inferredNodes };
}
