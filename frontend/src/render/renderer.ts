// Canvas 2D drawing of a SceneModel: only items inside the visible rectangle are drawn,
// with level of detail (shapes collapse to boxes when tiny, labels only when readable and
// clipped to their box). No DOM per node. The pieces: edges (edge_draw.ts), node shapes
// (node_shapes.ts), op labels beside their ellipses (op_labels.ts), geometry (geometry.ts),
// tiles of far views of big scenes (tiles.ts).
import type { SceneNode } from "../api/types";
import { Colorer, DARK, LIGHT, type Palette } from "./colors";
import { drawEdges } from "./edge_draw";
import { INFERRED_DASH, roundRect, segmentMiddles } from "./geometry";
import { FONT, READABLE_LABEL_PX, TextFitter } from "./label_fit";
import { LabelPlacer, type PlacedLabel } from "./labels";
import { drawShape, drawToggle } from "./node_shapes";
import { SceneModel, type Rect } from "./model";
import { drawOpLabel, MIN_LABEL_PX, OP_LABEL_PX, type OpLabelContext } from "./op_labels";
import { TileCache, type TileStats } from "./tiles";
import { Viewport } from "./viewport";

export { MIN_LABEL_PX, OP_LABEL_PX, READABLE_LABEL_PX };
const PAN_REFRESH_MS = 120;
/** Level of detail: a scene of more nodes than this, seen at a scale where no text is readable
 * (no label fits MIN_LABEL_PX under LOD_MAX_K), is drawn from cached tiles (drawTiled). */
export const LOD_MIN_NODES = 4000;
export const LOD_MAX_K = MIN_LABEL_PX / 10; // a node label's largest font is 10 world px // while dragging, a full drawing at most this often
export { CONTROL_DASH, REVERSED_DASH } from "./edge_draw";

export interface DrawState {
  selected: string | null;
  traced: Set<string> | null; // node names on the traced path
  tracedEdges: Set<number> | null;
  hidden: Set<string>; // removed from the main graph
  hover: string | null;
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
  /** the context drawn on: the canvas's, or a tile's while one is drawn (drawTile) */
  private ctx: CanvasRenderingContext2D;
  private readonly screenCtx: CanvasRenderingContext2D;
  private labelsOn = true;
  private readonly tiles = new TileCache();
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
  // Panning: the last full drawing, shifted while only the translation changes (see draw()).
  private panCache: { key: string; tx: number; ty: number; at: number; bitmap: HTMLCanvasElement; stats: DrawStats } | null = null;
  /** the canvas shows a shifted copy (strips may be blank): a full drawing should follow */
  shifted = false;
  private readonly ids = new WeakMap<object, number>();
  private nextId = 1;
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
    this.ctx = this.screenCtx = ctx;
    this.text = new TextFitter(ctx);
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
   * is shifted instead (a bitmap copy, ~1 ms whatever the scene size); a full drawing refills
   * the strips it uncovers every PAN_REFRESH_MS, and any other change (zoom, scene, selection,
   * hover, trace, colours, theme, removed nodes, canvas size) draws in full at once.
   */
  draw(model: SceneModel | null, vp: Viewport, st: DrawState): DrawStats {
    this.pending = false;
    if (model && useTiles(model, vp.k)) {
      this.panCache = null;
      this.shifted = false;
      return this.drawTiled(model, vp, st);
    }
    this.lastTiles = null;
    const t0 = performance.now();
    const key = this.contentKey(model, vp, st);
    const c = this.panCache;
    if (c && model && c.key === key) {
      const dx = vp.tx - c.tx, dy = vp.ty - c.ty;
      const [cw, ch] = this.size();
      if ((dx !== 0 || dy !== 0) && Math.abs(dx) < cw / 2 && Math.abs(dy) < ch / 2 && t0 - c.at < PAN_REFRESH_MS) {
        const dpr = window.devicePixelRatio || 1;
        this.ctx.setTransform(1, 0, 0, 1, 0, 0);
        this.ctx.fillStyle = this.palette.background;
        this.ctx.fillRect(0, 0, this.canvas.width, this.canvas.height);
        this.ctx.drawImage(c.bitmap, Math.round(dx * dpr), Math.round(dy * dpr));
        this.shifted = true;
        return { ...c.stats, ms: performance.now() - t0, edgeMs: 0 };
      }
    }
    const stats = this.drawFull(model, vp, st);
    this.shifted = false;
    this.panCache = model ? { key, tx: vp.tx, ty: vp.ty, at: performance.now(), bitmap: this.snapshot(), stats } : null;
    return stats;
  }

  /** Forget the last drawing: the next draw() draws in full. */
  invalidate(): void {
    this.panCache = null;
  }

  /**
   * The far view of a big scene (no text readable, thousands of nodes): the static drawing
   * from cached tiles (render/tiles.ts), drawn where missing within a per-frame budget, then
   * the selection and the hovered node on top. Leaves `pending` set while stand-ins show.
   */
  private drawTiled(model: SceneModel, vp: Viewport, st: DrawState): DrawStats {
    const t0 = performance.now();
    const ctx = this.ctx;
    const dpr = window.devicePixelRatio || 1;
    const [w, h] = this.size();
    this.path = "tiles";
    this.lastNodes = [];
    this.lastLabels = [];
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = this.palette.background;
    ctx.fillRect(0, 0, this.canvas.width, this.canvas.height);
    // the tiles show everything but the selection and the hover (drawn on top, each frame)
    const still: DrawState = { ...st, selected: null, hover: null };
    const id = (o: object | null) => (o ? this.idOf(o) : 0);
    this.tiles.setContent(JSON.stringify([id(model), id(st.traced), st.traced?.size ?? -1, id(st.tracedEdges),
      id(st.hidden), st.hidden.size, id(this.colorer), this.colorer?.mode ?? "", id(this.palette), dpr]));
    const stats: DrawStats = { nodes: 0, edges: 0, labels: 0, ms: 0, edgeMs: 0 };
    const tiles = this.tiles.draw(ctx, vp, w, h, dpr, {
      draw: (tctx, s, x0, y0, size) => this.drawTile(tctx, model, still, s / dpr, x0, y0, size),
      weight: (x0, y0, size) => model.weightIn({ x0, y0, x1: x0 + size, y1: y0 + size }),
    });
    this.lastTiles = tiles;
    this.pending = tiles.missing > 0;
    ctx.setTransform(dpr * vp.k, 0, 0, dpr * vp.k, dpr * vp.tx, dpr * vp.ty);
    for (const name of [st.hover, st.selected]) {
      const n = name ? model.node(name) : undefined;
      if (!n || st.hidden.has(n.name)) continue;
      const [stroke, lw] = this.strokeFor(n, st, this.palette.opStroke);
      ctx.strokeStyle = stroke;
      ctx.lineWidth = lw / vp.k;
      const pad = 2 / vp.k;
      ctx.strokeRect(n.x - n.width / 2 - pad, n.y - n.height / 2 - pad, n.width + 2 * pad, n.height + 2 * pad);
    }
    stats.nodes = model.countIn(vp.visible(w, h));
    stats.ms = performance.now() - t0;
    return stats;
  }

  /** One tile: the world square [x0, x0 + size)^2 at k CSS px per unit into a tile's context. */
  private drawTile(tctx: CanvasRenderingContext2D, model: SceneModel, st: DrawState, k: number,
                   x0: number, y0: number, size: number): void {
    const dpr = window.devicePixelRatio || 1;
    tctx.setTransform(k * dpr, 0, 0, k * dpr, -x0 * k * dpr, -y0 * k * dpr);
    tctx.fillStyle = this.palette.background;
    tctx.fillRect(x0, y0, size, size);
    const view = { x0, y0, x1: x0 + size, y1: y0 + size };
    const pad = 4 / k; // strokes and minimum sizes reach a few px past a node's box
    const nodeIds = model.nodesIn({ x0: x0 - pad, y0: y0 - pad, x1: x0 + size + pad, y1: y0 + size + pad });
    const stats: DrawStats = { nodes: 0, edges: 0, labels: 0, ms: 0, edgeMs: 0 };
    this.ctx = tctx;
    try {
      this.drawItems(model, nodeIds, view, k, st, false, stats);
    } finally {
      this.ctx = this.screenCtx;
      this.labelsOn = true;
    }
  }

  private idOf(o: object): number {
    let v = this.ids.get(o);
    if (v === undefined) this.ids.set(o, (v = this.nextId++));
    return v;
  }

  /** Everything a drawing depends on except the view's translation. */
  private contentKey(model: SceneModel | null, vp: Viewport, st: DrawState): string {
    const id = (o: object | null | undefined) => (o ? this.idOf(o) : 0);
    return JSON.stringify([id(model), vp.k, this.canvas.width, this.canvas.height, window.devicePixelRatio || 1,
      st.selected, st.hover, id(st.traced), st.traced?.size ?? -1, id(st.tracedEdges), st.tracedEdges?.size ?? -1,
      id(st.hidden), st.hidden.size, id(this.colorer), this.colorer?.mode ?? "", id(this.palette), this.dark]);
  }

  /** A copy of the canvas as drawn. */
  private snapshot(): HTMLCanvasElement {
    const old = this.panCache?.bitmap;
    const b = old && old.width === this.canvas.width && old.height === this.canvas.height ? old : document.createElement("canvas");
    b.width = this.canvas.width;
    b.height = this.canvas.height;
    b.getContext("2d", { alpha: false })!.drawImage(this.canvas, 0, 0);
    return b;
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
    this.drawItems(model, nodeIds, view, k, st, true, stats);
    stats.ms = performance.now() - t0;
    return stats;
  }

  /**
   * Draws the nodes `nodeIds` and the edges in `view` (world) on this.ctx, whose transform maps
   * world units to device px at `k` CSS px per unit. Labels only when `labels` (the screen
   * drawing, after the obstacles went into this.placer): a tile has none.
   */
  private drawItems(model: SceneModel, nodeIds: Uint32Array, view: Rect, k: number, st: DrawState, labels: boolean,
                    stats: DrawStats): void {
    const ctx = this.ctx;
    const hidden = st.hidden;
    const isHidden = (name: string) => hidden.size > 0 && hidden.has(name);
    this.labelsOn = labels;
    // 1. expanded groups (backgrounds), parents first
    for (const i of nodeIds) {
      const n = model.nodes[i];
      if ((n.kind === "meta" || n.kind === "series") && n.expanded && !isHidden(n.name)) {
        this.drawExpanded(n, k, st);
        stats.nodes++;
      }
    }
    // 2. edges, batched by style into one path each (render/edge_draw.ts)
    const tEdges = performance.now();
    const edgeIds = model.edgesIn(view);
    drawEdges(ctx, model, edgeIds, k, st, this.palette, stats);
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
        stats.labels += this.drawNode(n, k, st);
        if (labels && n.kind === "op" && OP_LABEL_PX * k >= MIN_LABEL_PX) opLabels.push(n);
        continue;
      }
      if (st.selected === n.name || st.traced?.has(n.name)) special.push(n);
      if (labels && n.kind === "op" && OP_LABEL_PX * k >= MIN_LABEL_PX) opLabels.push(n);
      const fill = screen < 3 && n.kind === "op" && !(this.colorer && this.colorer.mode !== "none") ? this.palette.opStroke : this.nodeFill(n);
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
      ctx.strokeStyle = this.palette.opStroke;
      ctx.lineWidth = 0.6 / k;
      ctx.stroke(outline);
    }
    for (const n of opLabels) stats.labels += drawOpLabel(this.labelCtx(), n, k, n.parent ? model.node(n.parent) : undefined);
    for (const n of special) {
      ctx.strokeStyle = st.selected === n.name ? this.palette.selected : this.palette.traced;
      ctx.lineWidth = 2 / k;
      ctx.strokeRect(n.x - n.width / 2 - 1 / k, n.y - n.height / 2 - 1 / k, n.width + 2 / k, n.height + 2 / k);
    }
    // 4. edge labels, on top, only when readable: on a segment of their own edge where they
    // cover nothing (the middle of the longest segment first), the same text nearby only once
    if (labels && k * 8 >= MIN_LABEL_PX) {
      const fs = 8;
      ctx.font = `${fs}px ${FONT}`;
      ctx.fillStyle = this.palette.edgeLabel;
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      const none = new Set<string>();
      for (const i of edgeIds) {
        const e = model.edges[i];
        if (!e.label || e.points.length < 2 || isHidden(e.source) || isHidden(e.target)) continue;
        const tw = this.text.measure(e.label, fs);
        for (const [mx, my] of segmentMiddles(e.points)) {
          const cx = mx + 2 + tw / 2;
          const r = this.screenBox(cx - tw / 2, my - fs / 2, cx + tw / 2, my + fs / 2);
          if (this.placer.duplicate(e.label, r, fs * k)) break;
          if (!this.placer.free(r, none)) continue;
          ctx.fillText(e.label, cx, my);
          this.placer.add({ text: e.label, full: e.label, owner: `edge:${e.source}->${e.target}`, kind: "edge", ...r, px: fs * k });
          stats.labels++;
          break;
        }
      }
    }
  }

  private nodeFill(n: SceneNode): string {
    const c = this.colorer?.fill(n);
    if (c) return c;
    if (this.colorer && this.colorer.mode !== "none") return this.palette.unknown;
    return n.kind === "meta" || n.kind === "series" ? this.palette.metaFill : this.palette.opFill;
  }

  private strokeFor(n: SceneNode, st: DrawState, base: string): [string, number] {
    if (st.selected === n.name) return [this.palette.selected, 2.5];
    if (st.traced?.has(n.name)) return [this.palette.traced, 2];
    if (st.hover === n.name) return [this.palette.selected, 1.2];
    return [base, 0.8];
  }

  private drawExpanded(n: SceneNode, k: number, st: DrawState): void {
    const ctx = this.ctx;
    const x0 = n.x - n.width / 2, y0 = n.y - n.height / 2;
    ctx.fillStyle = this.palette.expandedFill;
    const fill = this.colorer?.fill(n);
    roundRect(ctx, x0, y0, n.width, n.height, Math.min(6, n.height / 4));
    ctx.fill();
    if (fill) {
      ctx.save();
      ctx.globalAlpha = 0.25;
      ctx.fillStyle = fill;
      ctx.fill();
      ctx.restore();
    }
    const [stroke, lw] = this.strokeFor(n, st, this.palette.metaStroke);
    ctx.strokeStyle = stroke;
    ctx.lineWidth = lw / k;
    if (n.inferred) ctx.setLineDash(INFERRED_DASH.map((d) => d / k));
    ctx.stroke();
    ctx.setLineDash([]);
    // header: collapse control + label
    const fs = 9;
    if (this.labelsOn && fs * k >= MIN_LABEL_PX && n.width * k > 24) {
      const r = 4;
      drawToggle(this.ctx, this.palette, x0 + r + 3, y0 + r + 3, r, true, k);
      ctx.font = `${fs}px ${FONT}`;
      ctx.fillStyle = this.palette.mutedText;
      ctx.textAlign = "left";
      ctx.textBaseline = "middle";
      const text = n.cardinality > 1 ? `${n.label} (${n.cardinality})` : n.label;
      this.fitText(text, x0 + 2 * r + 6, y0 + r + 3, n.width - 2 * r - 10, fs, k, n.name, "group");
    }
  }

  /** Returns the number of labels drawn. */
  private drawNode(n: SceneNode, k: number, st: DrawState): number {
    const ctx = this.ctx;
    const w = n.width, h = n.height;
    const x0 = n.x - w / 2, y0 = n.y - h / 2;
    const fill = this.nodeFill(n);
    const [stroke, lw] = this.strokeFor(n, st, n.kind === "meta" || n.kind === "series" ? this.palette.metaStroke : this.palette.opStroke);
    ctx.lineWidth = lw / k;
    ctx.strokeStyle = stroke;
    ctx.fillStyle = fill;
    ctx.setLineDash([]);
    drawShape(ctx, n, k, this.palette);
    let labels = 0;
    const isGroup = n.kind === "meta";
    if (isGroup && h * k >= 12 && w * k >= 24) drawToggle(this.ctx, this.palette, x0 + 5, n.y, 3.2, false, k);
    if (n.kind === "in_embedding" || n.kind === "out_embedding") return 0;
    if (n.kind === "op") return 0; // labelled beside it, after all nodes (drawOpLabel)
    const fs = Math.min(10, Math.max(3, h * 0.6));
    if (this.labelsOn && fs * k >= MIN_LABEL_PX && w * k >= 14) {
      ctx.font = `${fs}px ${FONT}`;
      ctx.fillStyle = this.colorer && this.colorer.mode !== "none" && !this.dark ? "#202124" : this.palette.text;
      ctx.textBaseline = "middle";
      let left = x0 + 3, avail = w - 6;
      if (isGroup && h * k >= 12) {
        left += 9;
        avail -= 9;
      }
      if (isGroup && n.cardinality > 1 && w * k > 60) {
        const card = String(n.cardinality);
        const cw = this.text.measure(card, fs) + 3;
        const cr = this.screenBox(x0 + w - 3 - cw + 3, n.y - fs / 2, x0 + w - 3, n.y + fs / 2);
        if (cw < avail / 2 && this.placer.free(cr, n.name)) {
          ctx.textAlign = "right";
          ctx.fillStyle = this.palette.mutedText;
          ctx.fillText(card, x0 + w - 3, n.y);
          this.placer.add({ text: card, full: card, owner: n.name, kind: "node", ...cr, px: fs * k });
          avail -= cw;
          ctx.fillStyle = this.palette.text;
        }
      }
      ctx.textAlign = isGroup ? "left" : "center";
      const x = isGroup ? left : n.x;
      if (this.fitText(n.label, x, n.y, avail, fs, k, n.name, isGroup || n.kind === "series" ? "group" : "node")) labels++;
    }
    return labels;
  }

  /** What placing an op's label needs of the drawing under way (render/op_labels.ts). */
  private labelCtx(): OpLabelContext {
    return { ctx: this.ctx, text: this.text, placer: this.placer, palette: this.palette,
      screenBox: (x0, y0, x1, y1) => this.screenBox(x0, y0, x1, y1) };
  }

  /** World box -> screen CSS px box under the current drawing's view. */
  private screenBox(x0: number, y0: number, x1: number, y1: number) {
    const k = this.vpK;
    return { x0: x0 * k + this.vpTx, y0: y0 * k + this.vpTy, x1: x1 * k + this.vpTx, y1: y1 * k + this.vpTy };
  }

  /** fillText of `TextFitter.fit`'s text (aligned as the context says) where it covers no other node
   * or label; records it in the draw list. */
  private fitText(text: string, x: number, y: number, avail: number, fs: number, k: number, owner = "",
                  kind: PlacedLabel["kind"] = "node"): boolean {
    const fit = this.text.fit(text, avail, fs, k);
    if (!fit) return false;
    const align = this.ctx.textAlign;
    const x0 = align === "center" ? x - fit.tw / 2 : align === "right" ? x - fit.tw : x;
    const r = this.screenBox(x0, y - fit.fs / 2, x0 + fit.tw, y + fit.fs / 2);
    if (!this.placer.free(r, owner)) return false;
    this.ctx.font = `${fit.fs}px ${FONT}`;
    this.ctx.fillText(fit.t, x, y);
    this.placer.add({ text: fit.t, full: text, owner, kind, ...r, px: fit.fs * k });
    return true;
  }

}

/** Whether a view at scale k of this scene takes the tiled path. */
export function useTiles(model: SceneModel, k: number): boolean {
  return model.nodes.length > LOD_MIN_NODES && k < LOD_MAX_K;
}

export type { Rect };
