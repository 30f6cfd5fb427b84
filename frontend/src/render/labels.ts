// Label placement without overlaps ([CMS95] in docs/references.md), and labels that keep the part that differs.
//
// Every text the renderer draws goes through a LabelPlacer, in screen CSS px: a label is drawn
// only where its text box intersects no label placed before it and no node box other than the
// nodes it belongs to (its own node, the expanded groups holding it). Callers offer candidate
// spots in order of preference (an op's label: right of its ellipse, then left, above, below; an
// edge's label: the middle of its longest segment, then of the others) and the first free one
// wins; none free -> the label is hidden. Identical edge labels closer than a label's height are
// drawn once. Greedy, in drawing order (group labels, then ops, then edges), the order of
// priority used by map label placers (Christensen, Marks & Shieber 1995, "An empirical study of
// algorithms for point-feature label placement": greedy with candidate positions).
//
// Post: the boxes in `placed` (the draw list the test hooks publish) are pairwise disjoint, and
// none intersects an obstacle box other than the ones its owner excludes.
import type { Rect } from "./model";

/** A drawn text: its box in screen CSS px, the font size on screen, whose label it is. */
export interface PlacedLabel {
  text: string;
  full: string; // the label before shortening
  owner: string; // node name, or "edge:<source>-><target>"
  kind: "node" | "group" | "op" | "edge";
  x0: number;
  y0: number;
  x1: number;
  y1: number;
  px: number; // on-screen font size
}

const CELL = 64;

export class LabelPlacer {
  readonly placed: PlacedLabel[] = [];
  private readonly cells = new Map<number, number[]>(); // label ids per grid cell
  private readonly obstacles: { r: Rect; name: string }[] = [];
  private readonly obstacleCells = new Map<number, number[]>();

  /** A node box (screen px) no label may cover, except a label of `name` itself. */
  addObstacle(r: Rect, name: string): void {
    const id = this.obstacles.length;
    this.obstacles.push({ r, name });
    forCells(r, (k) => push(this.obstacleCells, k, id));
  }

  /** True when `r` intersects no placed label and no obstacle except those named in `own`. */
  free(r: Rect, own: ReadonlySet<string> | string): boolean {
    let ok = true;
    forCells(r, (k) => {
      if (!ok) return;
      for (const id of this.cells.get(k) ?? []) if (intersects(r, this.placed[id])) { ok = false; return; }
      for (const id of this.obstacleCells.get(k) ?? []) {
        const o = this.obstacles[id];
        if ((typeof own === "string" ? o.name === own : own.has(o.name))) continue;
        if (intersects(r, o.r)) { ok = false; return; }
      }
    });
    return ok;
  }

  /** Records a label as drawn (its box must be free). */
  add(label: PlacedLabel): void {
    const id = this.placed.length;
    this.placed.push(label);
    forCells(label, (k) => push(this.cells, k, id));
  }

  /** A placed label with the same text whose box is within `d` px of `r` (edge label duplicates). */
  duplicate(text: string, r: Rect, d: number): boolean {
    const grown = { x0: r.x0 - d, y0: r.y0 - d, x1: r.x1 + d, y1: r.y1 + d };
    let dup = false;
    forCells(grown, (k) => {
      for (const id of this.cells.get(k) ?? []) {
        const p = this.placed[id];
        if (p.kind === "edge" && p.text === text && intersects(grown, p)) dup = true;
      }
    });
    return dup;
  }
}

export function intersects(a: Rect, b: Rect): boolean {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

/** Grid cells of a box, clamped to the screen's neighbourhood (a zoomed-in group can be huge). */
function forCells(r: Rect, fn: (key: number) => void): void {
  const cl = (v: number) => Math.floor(Math.max(-1024, Math.min(8192, v)) / CELL);
  const a = cl(r.x0), b = cl(r.x1), c = cl(r.y0), d = cl(r.y1);
  for (let j = c; j <= d; j++) for (let i = a; i <= b; i++) fn(j * 1000 + i);
}

function push(m: Map<number, number[]>, k: number, id: number): void {
  const list = m.get(k);
  if (list) list.push(id);
  else m.set(k, [id]);
}

const ATTRIBUTE = /^([A-Za-z_][\w.]*)\[([^\]]+)\]$/;
const RANGE = /^\d+\s*[-,][\d\s,\-]*$/; // a series' index range (`mixed[4-7]`), not an attribute or index

/**
 * A PyTorch module label `Type[attribute]` that does not fit is shortened attribute first, the
 * part that differs between siblings (`Sequential[layer1]` -> `layer1 · Sequential`, cut on the
 * type: label_fit.ts); other labels are cut as they are. The full label stays in the info pane
 * and the tooltip. `[attribute, Type]` of such a label, else null (a series' index range is no
 * attribute).
 */
export function attributeParts(label: string): [string, string] | null {
  const m = ATTRIBUTE.exec(label);
  return m && !RANGE.test(m[2]) ? [m[2], m[1]] : null;
}
