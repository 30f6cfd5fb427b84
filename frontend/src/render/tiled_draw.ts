// The far view of a big scene (no text readable, thousands of nodes): the static drawing from
// cached tiles (render/tiles.ts), drawn where missing within a per-frame budget, then the
// selection and the hovered node on top, each frame. Part of render/renderer.ts's draw().
import type { Palette } from "./colors";
import { drawItems } from "./item_draw";
import type { SceneModel } from "./model";
import { strokeFor, type Paint } from "./paint";
import type { DrawState, DrawStats } from "./renderer";
import { TileCache, type TileStats } from "./tiles";
import type { Viewport } from "./viewport";

/** What the tiled drawing needs of its renderer. */
export interface TiledHost {
  readonly canvas: HTMLCanvasElement;
  palette(): Palette;
  /** CSS-pixel size of the canvas */
  size(): [number, number];
  /** what the tiles show (render/draw_keys.ts) */
  tileKey(model: SceneModel, st: DrawState, dpr: number): string;
  /** a tile's drawing on `ctx`: no labels */
  tilePaint(ctx: CanvasRenderingContext2D): Paint;
}

export class TiledDrawing {
  private readonly tiles = new TileCache();

  constructor(private readonly host: TiledHost) {}

  /** Draws the view on `ctx` (the canvas's); returns the stats and the tiles' (`missing > 0`:
   * stand-ins still show, draw again next frame). */
  draw(ctx: CanvasRenderingContext2D, model: SceneModel, vp: Viewport, st: DrawState): { stats: DrawStats; tiles: TileStats } {
    const t0 = performance.now();
    const host = this.host;
    const palette = host.palette();
    const dpr = window.devicePixelRatio || 1;
    const [w, h] = host.size();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = palette.background;
    ctx.fillRect(0, 0, host.canvas.width, host.canvas.height);
    // the tiles show everything but the selection and the hover (drawn on top, each frame)
    const still: DrawState = { ...st, selected: null, hover: null };
    this.tiles.setContent(host.tileKey(model, st, dpr));
    const stats: DrawStats = { nodes: 0, edges: 0, labels: 0, ms: 0, edgeMs: 0 };
    const tiles = this.tiles.draw(ctx, vp, w, h, dpr, {
      draw: (tctx, s, x0, y0, size, px, py) => this.drawTile(tctx, model, still, s / dpr, x0, y0, size, px, py),
      weight: (x0, y0, size) => model.weightIn({ x0, y0, x1: x0 + size, y1: y0 + size }),
    });
    ctx.setTransform(dpr * vp.k, 0, 0, dpr * vp.k, dpr * vp.tx, dpr * vp.ty);
    for (const name of [st.hover, st.selected]) {
      const n = name ? model.node(name) : undefined;
      if (!n || st.hidden.has(n.name)) continue;
      const [stroke, lw] = strokeFor({ palette }, n, st, palette.opStroke);
      ctx.strokeStyle = stroke;
      ctx.lineWidth = lw / vp.k;
      const pad = 2 / vp.k;
      ctx.strokeRect(n.x - n.width / 2 - pad, n.y - n.height / 2 - pad, n.width + 2 * pad, n.height + 2 * pad);
    }
    stats.nodes = model.countIn(vp.visible(w, h));
    stats.ms = performance.now() - t0;
    return { stats, tiles };
  }

  /** One tile, or a part of one: the world square [x0, x0 + size)^2 at k CSS px per unit into a
   * tile's context, its corner at the bitmap's pixel (px, py). */
  private drawTile(tctx: CanvasRenderingContext2D, model: SceneModel, st: DrawState, k: number,
                   x0: number, y0: number, size: number, px: number, py: number): void {
    const dpr = window.devicePixelRatio || 1;
    tctx.setTransform(k * dpr, 0, 0, k * dpr, px - x0 * k * dpr, py - y0 * k * dpr);
    tctx.fillStyle = this.host.palette().background;
    tctx.fillRect(x0, y0, size, size);
    const view = { x0, y0, x1: x0 + size, y1: y0 + size };
    const pad = 4 / k; // strokes and minimum sizes reach a few px past a node's box
    const nodeIds = model.nodesIn({ x0: x0 - pad, y0: y0 - pad, x1: x0 + size + pad, y1: y0 + size + pad });
    const stats: DrawStats = { nodes: 0, edges: 0, labels: 0, ms: 0, edgeMs: 0 };
    drawItems(this.host.tilePaint(tctx), model, nodeIds, view, k, st, stats);
  }
}
