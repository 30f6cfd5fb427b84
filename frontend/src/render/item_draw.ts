// The items of one drawing, in the order they stack: expanded groups (backgrounds, parents
// first), the edges (render/edge_draw.ts), the other nodes (small ones batched into one path per
// fill colour, large ones one by one: render/node_draw.ts), op labels (render/op_labels.ts), the
// selection and trace frames of small nodes, and last the edge labels where they are readable.
// Part of render/renderer.ts: the screen's drawing and each tile's.
import type { SceneNode } from "../api/types";
import { drawEdges } from "./edge_draw";
import { segmentMiddles } from "./geometry";
import { FONT } from "./label_fit";
import type { Rect, SceneModel } from "./model";
import { drawExpanded, drawNode } from "./node_draw";
import { drawOpLabel, MIN_LABEL_PX, OP_LABEL_PX } from "./op_labels";
import { isMatched, MATCH_STROKE, nodeFill, type Paint } from "./paint";
import type { DrawState, DrawStats } from "./renderer";

/**
 * Draws the nodes `nodeIds` and the edges in `view` (world) on p.ctx, whose transform maps
 * world units to device px at `k` CSS px per unit. Labels only when `p.labels` (the screen
 * drawing, after the obstacles went into p.placer): a tile has none.
 */
export function drawItems(p: Paint, model: SceneModel, nodeIds: Uint32Array, view: Rect, k: number, st: DrawState,
                          stats: DrawStats): void {
  const ctx = p.ctx;
  const labels = p.labels;
  const hidden = st.hidden;
  const isHidden = (name: string) => hidden.size > 0 && hidden.has(name);
  // 1. expanded groups (backgrounds), parents first
  for (const i of nodeIds) {
    const n = model.nodes[i];
    if ((n.kind === "meta" || n.kind === "series") && n.expanded && !isHidden(n.name)) {
      drawExpanded(p, n, k, st);
      stats.nodes++;
    }
  }
  // 2. edges, batched by style into one path each (render/edge_draw.ts)
  const tEdges = performance.now();
  const edgeIds = model.edgesIn(view);
  drawEdges(ctx, model, edgeIds, k, st, p.palette, stats);
  stats.edgeMs = performance.now() - tEdges;
  // 3. other nodes: small ones batched by fill colour, large ones drawn one by one
  const small = new Map<string, Path2D>();
  const outline = new Path2D();
  let outlined = false;
  const special: SceneNode[] = [];
  const opLabels: SceneNode[] = [];
  for (const i of nodeIds) {
    const n = model.nodes[i];
    if (((n.kind === "meta" || n.kind === "series") && n.expanded) || isHidden(n.name)) continue;
    stats.nodes++;
    const screen = Math.max(n.width, n.height) * k;
    if (screen >= 40 || (screen >= 14 && Math.min(10, Math.max(3, n.height * 0.6)) * k >= MIN_LABEL_PX)) {
      stats.labels += drawNode(p, n, k, st);
      if (labels && n.kind === "op" && OP_LABEL_PX * k >= MIN_LABEL_PX) opLabels.push(n);
      continue;
    }
    if (st.selected === n.name || st.traced?.has(n.name) || isMatched(n, st)) special.push(n);
    if (labels && n.kind === "op" && OP_LABEL_PX * k >= MIN_LABEL_PX) opLabels.push(n);
    const fill = screen < 3 && n.kind === "op" && !(p.colorer && p.colorer.mode !== "none") ? p.palette.opStroke : nodeFill(p, n);
    let path = small.get(fill);
    if (!path) small.set(fill, (path = new Path2D()));
    const w = Math.max(n.width, 1.5 / k), h = Math.max(n.height, 1.5 / k);
    const round = screen >= 10 && (n.kind === "op" || n.kind === "in_embedding");
    if (round) {
      path.moveTo(n.x + w / 2, n.y);
      path.ellipse(n.x, n.y, w / 2, h / 2, 0, 0, Math.PI * 2);
    } else path.rect(n.x - w / 2, n.y - h / 2, w, h);
    if (screen >= 8) {
      if (round) {
        outline.moveTo(n.x + w / 2, n.y);
        outline.ellipse(n.x, n.y, w / 2, h / 2, 0, 0, Math.PI * 2);
      } else outline.rect(n.x - n.width / 2, n.y - n.height / 2, n.width, n.height);
      outlined = true;
    }
  }
  for (const [fill, path] of small) {
    ctx.fillStyle = fill;
    ctx.fill(path);
  }
  if (outlined) {
    ctx.strokeStyle = p.palette.opStroke;
    ctx.lineWidth = 0.6 / k;
    ctx.stroke(outline);
  }
  for (const n of opLabels) stats.labels += drawOpLabel(p, n, k, n.parent ? model.node(n.parent) : undefined);
  for (const n of special) {
    ctx.strokeStyle = st.selected === n.name ? p.palette.selected : isMatched(n, st) ? MATCH_STROKE : p.palette.traced;
    ctx.lineWidth = 2 / k;
    ctx.strokeRect(n.x - n.width / 2 - 1 / k, n.y - n.height / 2 - 1 / k, n.width + 2 / k, n.height + 2 / k);
  }
  // 4. edge labels, on top, only when readable
  if (labels && k * 8 >= MIN_LABEL_PX) drawEdgeLabels(p, model, edgeIds, k, isHidden, stats);
}

/** Each edge's label on a segment of its own edge where it covers nothing (the middle of the
 * longest segment first), the same text nearby only once. */
function drawEdgeLabels(p: Paint, model: SceneModel, edgeIds: Iterable<number>, k: number,
                        isHidden: (name: string) => boolean, stats: DrawStats): void {
  const ctx = p.ctx;
  const fs = 8;
  ctx.font = `${fs}px ${FONT}`;
  ctx.fillStyle = p.palette.edgeLabel;
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  const none = new Set<string>();
  for (const i of edgeIds) {
    const e = model.edges[i];
    if (!e.label || e.points.length < 2 || isHidden(e.source) || isHidden(e.target)) continue;
    const tw = p.text.measure(e.label, fs);
    for (const [mx, my] of segmentMiddles(e.points)) {
      const cx = mx + 2 + tw / 2;
      const r = p.screenBox(cx - tw / 2, my - fs / 2, cx + tw / 2, my + fs / 2);
      if (p.placer.duplicate(e.label, r, fs * k)) break;
      if (!p.placer.free(r, none)) continue;
      ctx.fillText(e.label, cx, my);
      p.placer.add({ text: e.label, full: e.label, owner: `edge:${e.source}->${e.target}`, kind: "edge", ...r, px: fs * k });
      stats.labels++;
      break;
    }
  }
}
