// The edges of a drawing, batched by style (data / control / reversed, traced, on-screen width)
// into one path each: thousands of separate strokes cost too much. Edges shorter than 1.5 px
// on screen (under the node dots anyway) are skipped unless traced; arrow heads only from
// k >= 0.15. Part of render/item_draw.ts's drawItems.
import type { SceneModel } from "./model";
import type { Palette } from "./colors";
import { arrow, edgePath } from "./geometry";
import type { DrawState, DrawStats } from "./renderer";

/** On-screen dash patterns (px): control edges dotted, reversed (cycle) edges long-dashed. */
export const CONTROL_DASH = [2, 2];
export const REVERSED_DASH = [7, 3];

/** Strokes the edges `edgeIds` of `model` on `ctx` (transform: world units at k CSS px each); counts them in `stats`. */
export function drawEdges(ctx: CanvasRenderingContext2D, model: SceneModel, edgeIds: Iterable<number>, k: number,
                          st: DrawState, palette: Palette, stats: DrawStats): void {
  const hidden = st.hidden;
  const isHidden = (name: string) => hidden.size > 0 && hidden.has(name);
  const batches = new Map<string, { path: Path2D; arrows: Path2D; color: string; width: number; dash: number[] | null }>();
  const arrows = k >= 0.15;
  for (const i of edgeIds) {
    const e = model.edges[i];
    if (e.points.length < 2 || isHidden(e.source) || isHidden(e.target)) continue;
    if (model.edgeExtent(i) * k < 1.5 && !st.tracedEdges?.has(i)) continue; // under the node dots anyway
    const traced = st.tracedEdges?.has(i) ?? false;
    const width = Math.max(0.75 / k, traced ? Math.max(e.width, 2 / k) : e.width);
    const wq = Math.round(width * k * 4) / 4; // quantised on-screen width
    const reversed = (e as { reversed?: boolean }).reversed === true; // laid out against the flow (cycle)
    const key = `${e.kind === "control" ? "c" : "d"}${reversed ? "r" : ""}${traced ? "t" : ""}${wq}`;
    let b = batches.get(key);
    if (!b) {
      const color = traced ? palette.traced : reversed ? palette.reversedEdge : palette.edge;
      const dash = reversed ? REVERSED_DASH : e.kind === "control" ? CONTROL_DASH : null;
      b = { path: new Path2D(), arrows: new Path2D(), color, width: wq / k, dash };
      batches.set(key, b);
    }
    edgePath(b.path, e.points, k > 0.08, 1.5 / k);
    if (arrows) {
      const size = Math.max(3, Math.min(8, e.width * 1.5 + 2.5));
      const pts = e.points;
      if (e.kind === "reference") arrow(b.arrows, pts[1], pts[0], size);
      else arrow(b.arrows, pts[pts.length - 2], pts[pts.length - 1], size);
    }
    stats.edges++;
  }
  for (const b of batches.values()) {
    ctx.strokeStyle = b.color;
    ctx.lineWidth = b.width;
    ctx.setLineDash(b.dash ? b.dash.map((d) => d / k) : []);
    ctx.stroke(b.path);
    if (arrows) {
      ctx.fillStyle = b.color;
      ctx.fill(b.arrows);
    }
  }
  ctx.setLineDash([]);
}
