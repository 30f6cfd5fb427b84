// Canvas 2D drawing of a SceneModel: only items inside the visible rectangle are drawn,
// with level of detail (shapes collapse to boxes when tiny, labels only when readable and
// clipped to their box). No DOM per node. This module is the draw entry point (draw(): a shifted
// copy while panning, cached tiles for far views of big scenes, else every item); the pieces:
// the items of a drawing (item_draw.ts: edges in edge_draw.ts, nodes in node_draw.ts and
// node_shapes.ts, op labels in op_labels.ts), what a drawing under way shares (paint.ts), the
// panning shift (pan_shift.ts), the tiled far view (tiled_draw.ts, tiles.ts), the keys cached
// drawings are checked against (draw_keys.ts), geometry (geometry.ts).
import { Colorer, DARK, LIGHT, type Palette } from "./colors";
import { DrawKeys } from "./draw_keys";
import { drawItems } from "./item_draw";
import { READABLE_LABEL_PX, TextFitter } from "./label_fit";
import { LabelPlacer, type PlacedLabel } from "./labels";
import { SceneModel, type Rect } from "./model";
import { MIN_LABEL_PX, OP_LABEL_PX } from "./op_labels";
import { PanShift } from "./pan_shift";
import type { Paint } from "./paint";
import { TiledDrawing } from "./tiled_draw";
import type { TileStats } from "./tiles";
import { Viewport } from "./viewport";

export { MIN_LABEL_PX, OP_LABEL_PX, READABLE_LABEL_PX };
/** Level of detail: a scene of more nodes than this, seen at a scale where no text is readable
 * (no label fits MIN_LABEL_PX under LOD_MAX_K), is drawn from cached tiles (tiled_draw.ts). */
export const LOD_MIN_NODES = 4000;
export const LOD_MAX_K = MIN_LABEL_PX / 10; // a node label's largest font is 10 world px
export { CONTROL_DASH, REVERSED_DASH } from "./edge_draw";

export interface DrawState {
  selected: string | null;
  traced: Set<string> | null; // node names on the traced path
  tracedEdges: Set<number> | null;
  hidden: Set<string>; // removed from the main graph
  hover: string | null;
  matched?: Set<string> | null; // a pattern search's matches: their ops and the groups holding one (outlined when closed)
}

/** A node box of the last full drawing, canvas CSS px (test hooks). */
export interface DrawnNode {
  name: string;
  kind: string;
  expanded: boolean;
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

export interface DrawStats {
  nodes: number;
  edges: number;
  labels: number;
  ms: number;
  edgeMs: number; // of which building and stroking the edges
}

export class Renderer {
  /** the canvas's context */
  private readonly ctx: CanvasRenderingContext2D;
  private readonly keys = new DrawKeys();
  private readonly pan: PanShift;
  private readonly tiled: TiledDrawing;
  /** which path the last drawing took: every item ("full") or cached tiles ("tiles", far views of big scenes) */
  path: "full" | "tiles" = "full";
  /** the last tiled drawing's tiles (test hooks, bench); null after a full one */
  lastTiles: TileStats | null = null;
  /** a tiled drawing still shows stand-ins for tiles not drawn yet: draw again next frame */
  pending = false;
  palette: Palette = LIGHT;
  dark = false;
  colorer: Colorer | null = null;
  private readonly text: TextFitter;
  /** the canvas shows a shifted copy (strips may be blank): a full drawing should follow */
  shifted = false;
  /** Every text of the last full drawing, in screen CSS px (test hooks: no two intersect). */
  lastLabels: PlacedLabel[] = [];
  /** Screen boxes of the nodes of the last full drawing (test hooks). */
  lastNodes: DrawnNode[] = [];
  private placer = new LabelPlacer();
  private vpK = 1;
  private vpTx = 0;
  private vpTy = 0;

  constructor(readonly canvas: HTMLCanvasElement) {
    const ctx = canvas.getContext("2d", { alpha: false });
    if (!ctx) throw new Error("Canvas 2D is not available in this browser");
    this.ctx = ctx;
    this.text = new TextFitter(ctx);
    this.pan = new PanShift(canvas, () => this.size());
    this.tiled = new TiledDrawing({
      canvas,
      palette: () => this.palette,
      size: () => this.size(),
      tileKey: (model, st, dpr) => this.keys.tiles(model, st, this, dpr),
      tilePaint: (tctx) => this.paint(tctx, false),
    });
    this.clear();
  }

  setDark(dark: boolean): void {
    this.dark = dark;
    this.palette = dark ? DARK : LIGHT;
    this.clear();
  }

  /** Fills the canvas with the page background. The canvas is opaque ({alpha: false}): a new
   * or resized one is black until drawn on, and the first scene may take seconds to come. */
  clear(): void {
    this.ctx.setTransform(1, 0, 0, 1, 0, 0);
    this.ctx.fillStyle = this.palette.background;
    this.ctx.fillRect(0, 0, this.canvas.width, this.canvas.height);
  }

  /** CSS-pixel size of the canvas. */
  size(): [number, number] {
    return [this.canvas.clientWidth || 1, this.canvas.clientHeight || 1];
  }

  resize(): void {
    const dpr = window.devicePixelRatio || 1;
    const [w, h] = this.size();
    const W = Math.round(w * dpr), H = Math.round(h * dpr);
    if (this.canvas.width !== W || this.canvas.height !== H) {
      this.canvas.width = W;
      this.canvas.height = H;
      this.clear(); // (a resized canvas is black; the scene's drawing may be frames away)
    }
  }

  /**
   * Draws the scene. While only the view's translation changes (a drag), the last full drawing
   * is shifted instead (render/pan_shift.ts); a full drawing refills the strips it uncovers every
   * PAN_REFRESH_MS, and any other change (zoom, scene, selection, hover, trace, colours, theme,
   * removed nodes, canvas size) draws in full at once. A far view of a big scene is drawn from
   * cached tiles (render/tiled_draw.ts).
   */
  draw(model: SceneModel | null, vp: Viewport, st: DrawState): DrawStats {
    this.pending = false;
    if (model && useTiles(model, vp.k)) {
      this.pan.forget();
      this.shifted = false;
      this.path = "tiles";
      this.lastNodes = [];
      this.lastLabels = [];
      const { stats, tiles } = this.tiled.draw(this.ctx, model, vp, st);
      this.lastTiles = tiles;
      this.pending = tiles.missing > 0;
      return stats;
    }
    this.lastTiles = null;
    const t0 = performance.now();
    const key = this.keys.content(model, vp, st, this.canvas, this);
    const shifted = model ? this.pan.shift(this.ctx, key, vp, this.palette.background, t0) : null;
    if (shifted) {
      this.shifted = true;
      return shifted;
    }
    const stats = this.drawFull(model, vp, st);
    this.shifted = false;
    if (model) this.pan.remember(key, vp, stats);
    else this.pan.forget();
    return stats;
  }

  /** Forget the last drawing: the next draw() draws in full. */
  invalidate(): void {
    this.pan.forget();
  }

  private drawFull(model: SceneModel | null, vp: Viewport, st: DrawState): DrawStats {
    const t0 = performance.now();
    const ctx = this.ctx;
    const dpr = window.devicePixelRatio || 1;
    const [w, h] = this.size();
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.fillStyle = this.palette.background;
    ctx.fillRect(0, 0, w, h);
    const stats: DrawStats = { nodes: 0, edges: 0, labels: 0, ms: 0, edgeMs: 0 };
    this.path = "full";
    if (!model) return stats;
    const k = vp.k;
    ctx.setTransform(dpr * k, 0, 0, dpr * k, dpr * vp.tx, dpr * vp.ty);
    const view = vp.visible(w, h, 20);
    const nodeIds = model.nodesIn(view);
    // labels: every text box is placed where it covers no other label and no other node
    this.placer = new LabelPlacer();
    this.vpK = k;
    this.vpTx = vp.tx;
    this.vpTy = vp.ty;
    this.lastNodes = [];
    for (const i of nodeIds) {
      const n = model.nodes[i];
      if (st.hidden.size > 0 && st.hidden.has(n.name)) continue;
      const r = this.screenBox(n.x - n.width / 2, n.y - n.height / 2, n.x + n.width / 2, n.y + n.height / 2);
      if (r.x1 < -50 || r.y1 < -50 || r.x0 > w + 50 || r.y0 > h + 50) continue;
      this.lastNodes.push({ name: n.name, kind: n.kind, expanded: n.expanded, ...r });
      if (!n.expanded) this.placer.addObstacle(r, n.name); // an expanded group (or series) contains, it covers nothing
    }
    this.lastLabels = this.placer.placed;
    drawItems(this.paint(ctx, true), model, nodeIds, view, k, st, stats);
    stats.ms = performance.now() - t0;
    return stats;
  }

  /** The drawing under way on `ctx` (render/paint.ts): the screen's, with labels, or a tile's. */
  private paint(ctx: CanvasRenderingContext2D, labels: boolean): Paint {
    return { ctx, text: this.text, placer: this.placer, palette: this.palette, colorer: this.colorer, dark: this.dark,
      labels, screenBox: (x0, y0, x1, y1) => this.screenBox(x0, y0, x1, y1) };
  }

  /** World box -> screen CSS px box under the current drawing's view. */
  private screenBox(x0: number, y0: number, x1: number, y1: number) {
    const k = this.vpK;
    return { x0: x0 * k + this.vpTx, y0: y0 * k + this.vpTy, x1: x1 * k + this.vpTx, y1: y1 * k + this.vpTy };
  }
}

/** Whether a view at scale k of this scene takes the tiled path. */
export function useTiles(model: SceneModel, k: number): boolean {
  return model.nodes.length > LOD_MIN_NODES && k < LOD_MAX_K;
}

export type { Rect };
