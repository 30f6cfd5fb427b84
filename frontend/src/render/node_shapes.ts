// The outline of a node by its kind, filled and stroked with the context's current styles:
// groups rounded boxes (dashed outline when inferred), series three stacked boxes, bridges and
// stubs dashed pills, in-embeddings circles, out-embeddings diamonds, ops ellipses; an extracted
// node gets a dashed frame. And the +/- control of a group. Part of render/node_draw.ts.
import type { SceneNode } from "../api/types";
import type { Palette } from "./colors";
import { INFERRED_DASH, roundRect } from "./geometry";

/** Draws node `n`'s shape (fill and stroke style set by the caller) at k CSS px per world unit. */
export function drawShape(ctx: CanvasRenderingContext2D, n: SceneNode, k: number, palette: Palette): void {
  const w = n.width, h = n.height;
  const x0 = n.x - w / 2, y0 = n.y - h / 2;
  switch (n.kind) {
    case "meta":
      roundRect(ctx, x0, y0, w, h, Math.min(5, h / 3));
      ctx.fill();
      if (n.inferred) ctx.setLineDash(INFERRED_DASH.map((d) => d / k));
      ctx.stroke();
      ctx.setLineDash([]);
      break;
    case "series": {
      const off = Math.min(3, h / 5);
      for (let s = 2; s >= 0; s--) {
        roundRect(ctx, x0 + s * off, y0 - s * off + 2 * off, w - 2 * off, h - 2 * off, Math.min(4, h / 4));
        ctx.fill();
        ctx.stroke();
      }
      break;
    }
    case "bridge":
    case "stub":
      ctx.setLineDash([2 / k, 2 / k]);
      roundRect(ctx, x0, y0, w, h, Math.min(w, h) / 2);
      ctx.fill();
      ctx.stroke();
      ctx.setLineDash([]);
      break;
    case "in_embedding":
      ctx.beginPath();
      ctx.arc(n.x, n.y, Math.min(w, h) / 2, 0, Math.PI * 2);
      ctx.fill();
      ctx.stroke();
      break;
    case "out_embedding":
      ctx.beginPath();
      ctx.moveTo(n.x, y0);
      ctx.lineTo(x0 + w, n.y);
      ctx.lineTo(n.x, y0 + h);
      ctx.lineTo(x0, n.y);
      ctx.closePath();
      ctx.fill();
      ctx.stroke();
      break;
    default:
      ctx.beginPath();
      ctx.ellipse(n.x, n.y, w / 2, h / 2, 0, 0, Math.PI * 2);
      ctx.fill();
      ctx.stroke();
  }
  if (n.extracted) {
    ctx.setLineDash([3 / k, 2 / k]);
    ctx.strokeStyle = palette.mutedText;
    ctx.lineWidth = 0.8 / k;
    ctx.strokeRect(x0 - 2, y0 - 2, w + 4, h + 4);
    ctx.setLineDash([]);
  }}

/** A group's +/- control: a circle at (cx, cy) of radius r with a minus (open) or a plus (closed). */
export function drawToggle(ctx: CanvasRenderingContext2D, palette: Palette, cx: number, cy: number, r: number,
                           expanded: boolean, k: number): void {
  ctx.beginPath();
  ctx.arc(cx, cy, r, 0, Math.PI * 2);
  ctx.fillStyle = palette.background;
  ctx.fill();
  ctx.strokeStyle = palette.metaStroke;
  ctx.lineWidth = 1 / k;
  ctx.stroke();
  ctx.beginPath();
  ctx.moveTo(cx - r * 0.55, cy);
  ctx.lineTo(cx + r * 0.55, cy);
  if (!expanded) {
    ctx.moveTo(cx, cy - r * 0.55);
    ctx.lineTo(cx, cy + r * 0.55);
  }
  ctx.strokeStyle = palette.text;
  ctx.lineWidth = 1.2 / k;
  ctx.stroke();
}
