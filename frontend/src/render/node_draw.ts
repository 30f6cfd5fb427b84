// A node drawn one by one (large enough on screen to show its shape and label): an expanded
// group's background box with its header (collapse control, label), or a closed node's shape
// (render/node_shapes.ts) with its label and, for a group, its +/- control and cardinality.
// Part of render/item_draw.ts.
import type { SceneNode } from "../api/types";
import { INFERRED_DASH, roundRect } from "./geometry";
import { FONT } from "./label_fit";
import { drawShape, drawToggle } from "./node_shapes";
import { MIN_LABEL_PX } from "./op_labels";
import { fitText, nodeFill, strokeFor, type Paint } from "./paint";
import type { DrawState } from "./renderer";

/** An expanded group (or series): its box, tinted by its colour, and its header. */
export function drawExpanded(p: Paint, n: SceneNode, k: number, st: DrawState): void {
  const ctx = p.ctx;
  const x0 = n.x - n.width / 2, y0 = n.y - n.height / 2;
  ctx.fillStyle = p.palette.expandedFill;
  const fill = p.colorer?.fill(n);
  roundRect(ctx, x0, y0, n.width, n.height, Math.min(6, n.height / 4));
  ctx.fill();
  if (fill) {
    ctx.save();
    ctx.globalAlpha = 0.25;
    ctx.fillStyle = fill;
    ctx.fill();
    ctx.restore();
  }
  const [stroke, lw] = strokeFor(p, n, st, p.palette.metaStroke);
  ctx.strokeStyle = stroke;
  ctx.lineWidth = lw / k;
  if (n.inferred) ctx.setLineDash(INFERRED_DASH.map((d) => d / k));
  ctx.stroke();
  ctx.setLineDash([]);
  // header: collapse control + label
  const fs = 9;
  if (p.labels && fs * k >= MIN_LABEL_PX && n.width * k > 24) {
    const r = 4;
    drawToggle(p.ctx, p.palette, x0 + r + 3, y0 + r + 3, r, true, k);
    ctx.font = `${fs}px ${FONT}`;
    ctx.fillStyle = p.palette.mutedText;
    ctx.textAlign = "left";
    ctx.textBaseline = "middle";
    const text = n.cardinality > 1 ? `${n.label} (${n.cardinality})` : n.label;
    fitText(p, text, x0 + 2 * r + 6, y0 + r + 3, n.width - 2 * r - 10, fs, k, n.name, "group");
  }
}

/** A closed node, shape and label. Returns the number of labels drawn. */
export function drawNode(p: Paint, n: SceneNode, k: number, st: DrawState): number {
  const ctx = p.ctx;
  const w = n.width, h = n.height;
  const x0 = n.x - w / 2, y0 = n.y - h / 2;
  const fill = nodeFill(p, n);
  const [stroke, lw] = strokeFor(p, n, st, n.kind === "meta" || n.kind === "series" ? p.palette.metaStroke : p.palette.opStroke);
  ctx.lineWidth = lw / k;
  ctx.strokeStyle = stroke;
  ctx.fillStyle = fill;
  ctx.setLineDash([]);
  drawShape(ctx, n, k, p.palette);
  let labels = 0;
  const isGroup = n.kind === "meta";
  if (isGroup && h * k >= 12 && w * k >= 24) drawToggle(p.ctx, p.palette, x0 + 5, n.y, 3.2, false, k);
  if (n.kind === "in_embedding" || n.kind === "out_embedding") return 0;
  if (n.kind === "op") return 0; // labelled beside it, after all nodes (drawOpLabel)
  const fs = Math.min(10, Math.max(3, h * 0.6));
  if (p.labels && fs * k >= MIN_LABEL_PX && w * k >= 14) {
    ctx.font = `${fs}px ${FONT}`;
    ctx.fillStyle = p.colorer && p.colorer.mode !== "none" && !p.dark ? "#202124" : p.palette.text;
    ctx.textBaseline = "middle";
    let left = x0 + 3, avail = w - 6;
    if (isGroup && h * k >= 12) {
      left += 9;
      avail -= 9;
    }
    if (isGroup && n.cardinality > 1 && w * k > 60) {
      const card = String(n.cardinality);
      const cw = p.text.measure(card, fs) + 3;
      const cr = p.screenBox(x0 + w - 3 - cw + 3, n.y - fs / 2, x0 + w - 3, n.y + fs / 2);
      if (cw < avail / 2 && p.placer.free(cr, n.name)) {
        ctx.textAlign = "right";
        ctx.fillStyle = p.palette.mutedText;
        ctx.fillText(card, x0 + w - 3, n.y);
        p.placer.add({ text: card, full: card, owner: n.name, kind: "node", ...cr, px: fs * k });
        avail -= cw;
        ctx.fillStyle = p.palette.text;
      }
    }
    ctx.textAlign = isGroup ? "left" : "center";
    const x = isGroup ? left : n.x;
    if (fitText(p, n.label, x, n.y, avail, fs, k, n.name, isGroup || n.kind === "series" ? "group" : "node")) labels++;
  }
  return labels;
}
