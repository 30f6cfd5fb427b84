// Level of detail for big scenes seen from afar: the scene's static drawing cut into cached
// bitmap tiles, as map viewers do. A tile is TILE x TILE device px of the world drawn at a level
// z, i.e. at scale 2^z device px per world unit; a view at scale k uses the level just above it
// (2^z >= k * dpr, so tiles are only ever shrunk, by at most 2x) and costs one drawImage per
// tile whatever the number of nodes. Tiles are drawn on demand within a time budget per frame
// (the first drawing of a 60k-node scene is spread over frames, never one long task); a tile
// not drawn yet shows, in this order, the same tile of the previous content (a colour switch
// does not blank the view), a coarser level's tile scaled up, a finer level's four scaled down.
// Pre: the drawer draws the world square it is given, within the clip the cache sets.
// Post: `draw` leaves the canvas transform at identity.

export const TILE = 256; // device px per tile side
const MAX_TILES = 192; // cached tiles (~48 MB of bitmaps), least recently used dropped first
const MAX_STALE = 96;
const COARSER = 4; // levels looked up for a stand-in
export const TILE_BUDGET_MS = 10; // tile drawing per frame; at least one tile is always drawn

export interface TileView {
  k: number; // world -> CSS px scale
  tx: number;
  ty: number;
}

/** What the tiles show. `draw` draws the world square [x0, x0 + size)^2 at `scale` device px per
 * unit into ctx, its corner (x0, y0) at the bitmap's pixel (px, py) (a heavy tile is drawn a part
 * at a time: the part's place in its tile), within the clip the cache has set to that square of
 * the bitmap; `weight` says how much drawing
 * that square costs (~ microseconds: items in it), so that a heavy tile is drawn a quarter at
 * a time, over several frames. */
export interface TileDrawer {
  draw(ctx: CanvasRenderingContext2D, scale: number, x0: number, y0: number, size: number, px: number, py: number): void;
  weight(x0: number, y0: number, size: number): number;
}

/** Heavier squares are split in four (down to MIN_PART px) before they are drawn. */
export const MAX_WEIGHT = 16000;
const MIN_PART = 16;

export interface TileStats {
  level: number;
  tiles: number; // tiles the view needs
  fresh: number; // of which drawn from this content at this level
  drawnNow: number; // of which drawn in this frame
  missing: number; // shown as a stand-in or blank: another frame is needed
  ms: number; // spent drawing tiles in this frame
}

interface Tile {
  bitmap: HTMLCanvasElement;
  used: number;
}

/** A tile being drawn: the squares (tile px: x, y, side) still to draw. */
interface Job {
  bitmap: HTMLCanvasElement;
  todo: [number, number, number][];
}

export class TileCache {
  private tiles = new Map<string, Tile>();
  private jobs = new Map<string, Job>();
  private stale = new Map<string, Tile>();
  private content = "";
  private spare: HTMLCanvasElement[] = [];
  private clock = 0;

  /** The static content the tiles show (scene, colours, theme, removed nodes...): when it
   * changes, the tiles drawn so far become stand-ins only. */
  setContent(key: string): void {
    if (key === this.content) return;
    this.content = key;
    this.dropJobs();
    for (const [k, t] of this.stale) this.recycle(t, k);
    this.stale = this.tiles;
    this.tiles = new Map();
    while (this.stale.size > MAX_STALE) this.dropOldest(this.stale);
  }

  /** Forgets every tile (a new scene: the old one is no stand-in). */
  clear(): void {
    this.dropJobs();
    for (const m of [this.tiles, this.stale]) for (const t of m.values()) this.recycle(t);
    this.tiles.clear();
    this.stale.clear();
    this.content = "";
  }

  /** The level whose tiles are drawn for a view at scale k. */
  static level(k: number, dpr: number): number {
    return Math.ceil(Math.log2(k * dpr) - 1e-9);
  }

  /**
   * Draws the view (w x h CSS px) from tiles into ctx, drawing missing tiles with `drawer`
   * while this frame's budget lasts. Returns what it did; `missing > 0`: call again next frame.
   */
  draw(ctx: CanvasRenderingContext2D, vp: TileView, w: number, h: number, dpr: number, drawer: TileDrawer,
       budgetMs = TILE_BUDGET_MS): TileStats {
    const t0 = performance.now();
    const z = TileCache.level(vp.k, dpr);
    const s = 2 ** z;
    const f = (vp.k * dpr) / s; // tile px -> canvas px, in (0.5, 1]
    const ox = vp.tx * dpr, oy = vp.ty * dpr; // canvas px of the world origin
    const span = TILE * f;
    const i0 = Math.floor(-ox / span), i1 = Math.floor((w * dpr - ox) / span);
    const j0 = Math.floor(-oy / span), j1 = Math.floor((h * dpr - oy) / span);
    const stats: TileStats = { level: z, tiles: 0, fresh: 0, drawnNow: 0, missing: 0, ms: 0 };
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    // nearest tiles to the centre first: what the user looks at fills in first
    const order: [number, number][] = [];
    for (let j = j0; j <= j1; j++) for (let i = i0; i <= i1; i++) order.push([i, j]);
    const ci = (i0 + i1) / 2, cj = (j0 + j1) / 2;
    order.sort((a, b) => Math.hypot(a[0] - ci, a[1] - cj) - Math.hypot(b[0] - ci, b[1] - cj));
    for (const [i, j] of order) {
      stats.tiles++;
      // adjacent tiles share their rounded borders: no seams
      const x0 = Math.round(ox + i * span), x1 = Math.round(ox + (i + 1) * span);
      const y0 = Math.round(oy + j * span), y1 = Math.round(oy + (j + 1) * span);
      const key = `${z}/${i}/${j}`;
      let t: Tile | null | undefined = this.tiles.get(key);
      if (!t && (stats.drawnNow === 0 || performance.now() - t0 < budgetMs)) {
        t = this.render(z, i, j, drawer, t0 + budgetMs);
        stats.drawnNow++;
      }
      if (t) {
        t.used = ++this.clock;
        ctx.drawImage(t.bitmap, x0, y0, x1 - x0, y1 - y0);
        stats.fresh++;
        continue;
      }
      stats.missing++;
      this.standIn(ctx, z, i, j, x0, y0, x1, y1);
    }
    stats.ms = performance.now() - t0;
    return stats;
  }

  /** Goes on drawing tile (z, i, j) until it is done (returned) or the deadline passed (null;
   * at least one square is drawn per call). */
  private render(z: number, i: number, j: number, drawer: TileDrawer, deadline: number): Tile | null {
    const key = `${z}/${i}/${j}`;
    let job = this.jobs.get(key);
    if (!job) {
      while (this.tiles.size + this.jobs.size >= MAX_TILES && this.tiles.size) this.dropOldest(this.tiles);
      const bitmap = this.spare.pop() ?? document.createElement("canvas");
      bitmap.width = TILE;
      bitmap.height = TILE;
      this.jobs.set(key, (job = { bitmap, todo: [[0, 0, TILE]] }));
    }
    const ctx = job.bitmap.getContext("2d", { alpha: false })!;
    const s = 2 ** z;
    let drawn = 0;
    while (job.todo.length && (drawn === 0 || performance.now() < deadline)) {
      const [px, py, side] = job.todo.pop()!;
      const x0 = (i * TILE + px) / s, y0 = (j * TILE + py) / s, size = side / s;
      if (side > MIN_PART && drawer.weight(x0, y0, size) > MAX_WEIGHT) {
        const h = side / 2;
        job.todo.push([px, py, h], [px + h, py, h], [px, py + h, h], [px + h, py + h, h]);
        continue;
      }
      ctx.save();
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.beginPath();
      ctx.rect(px, py, side, side);
      ctx.clip();
      drawer.draw(ctx, s, x0, y0, size, px, py);
      ctx.restore();
      drawn++;
    }
    if (job.todo.length) return null;
    this.jobs.delete(key);
    const t = { bitmap: job.bitmap, used: ++this.clock };
    this.tiles.set(key, t);
    return t;
  }

  private dropJobs(): void {
    for (const job of this.jobs.values()) if (this.spare.length < 32) this.spare.push(job.bitmap);
    this.jobs.clear();
  }

  /** A missing tile's place: the old content's tile, else a coarser or finer level's. */
  private standIn(ctx: CanvasRenderingContext2D, z: number, i: number, j: number,
                  x0: number, y0: number, x1: number, y1: number): void {
    const old = this.stale.get(`${z}/${i}/${j}`);
    if (old) {
      ctx.drawImage(old.bitmap, x0, y0, x1 - x0, y1 - y0);
      return;
    }
    for (const src of [this.tiles, this.stale]) {
      for (let d = 1; d <= COARSER; d++) {
        const p = src.get(`${z - d}/${i >> d}/${j >> d}`);
        if (!p) continue;
        const part = TILE >> d; // the part of the coarser tile this one covers
        const sx = (i - ((i >> d) << d)) * part, sy = (j - ((j >> d) << d)) * part;
        ctx.drawImage(p.bitmap, sx, sy, part, part, x0, y0, x1 - x0, y1 - y0);
        return;
      }
    }
    const hw = (x1 - x0) / 2, hh = (y1 - y0) / 2;
    for (let q = 0; q < 4; q++) {
      const c = this.tiles.get(`${z + 1}/${2 * i + (q & 1)}/${2 * j + (q >> 1)}`);
      if (c) ctx.drawImage(c.bitmap, x0 + (q & 1) * hw, y0 + (q >> 1) * hh, hw, hh);
    }
  }

  private dropOldest(m: Map<string, Tile>): void {
    let oldest: string | null = null, used = Infinity;
    for (const [k, t] of m) if (t.used < used) [oldest, used] = [k, t.used];
    if (oldest !== null) this.recycle(m.get(oldest)!, oldest, m);
  }

  private recycle(t: Tile, key?: string, from?: Map<string, Tile>): void {
    if (from && key !== undefined) from.delete(key);
    if (this.spare.length < 32) this.spare.push(t.bitmap);
  }
}
