// Minimap: the whole scene drawn once into an offscreen bitmap (rebuilt only when the scene,
// colours, theme or removed nodes change; its pixels written directly), plus the viewport rectangle
// drawn on top each frame: panning and zooming only copy the bitmap and stroke the rectangle.
// Dragging / clicking in it moves the main view. Hidden while the whole scene is on screen.
import type { Palette } from "./colors";
import type { SceneModel } from "./model";
import { NO_SLICING, type Slicer } from "./slicer";
import type { Viewport } from "./viewport";

export class Minimap {
  private cache: HTMLCanvasElement | null = null;
  private scale = 1;
  private ox = 0;
  private oy = 0;
  private model: SceneModel | null = null;

  constructor(
    readonly canvas: HTMLCanvasElement,
    private readonly onCenter: (wx: number, wy: number) => void,
  ) {
    let dragging = false;
    const move = (ev: PointerEvent) => {
      if (!this.model) return;
      const r = this.canvas.getBoundingClientRect();
      const mx = ev.clientX - r.left, my = ev.clientY - r.top;
      this.onCenter((mx - this.ox) / this.scale, (my - this.oy) / this.scale);
    };
    canvas.addEventListener("pointerdown", (ev) => {
      dragging = true;
      canvas.setPointerCapture(ev.pointerId);
      move(ev);
      ev.stopPropagation();
    });
    canvas.addEventListener("pointermove", (ev) => dragging && move(ev));
    canvas.addEventListener("pointerup", () => (dragging = false));
  }

  /**
   * Draws the scene into a new bitmap, in slices of `slicer` (a 90k-node scene in several short
   * tasks); the old bitmap and its mapping stay until the new one is done. Throws Superseded
   * when the slicer says this rebuild is no longer wanted.
   */
  async rebuild(model: SceneModel | null, palette: Palette, fill: (i: number) => string, slicer: Slicer = NO_SLICING): Promise<void> {
    const w = this.canvas.clientWidth || 200, h = this.canvas.clientHeight || 150;
    const dpr = window.devicePixelRatio || 1;
    if (!model) {
      this.model = null;
      this.cache = null;
      return;
    }
    const b = model.bounds;
    const bw = Math.max(1, b.x1 - b.x0), bh = Math.max(1, b.y1 - b.y0);
    const scale = Math.min((w - 8) / bw, (h - 8) / bh);
    const mx = (w - bw * scale) / 2 - b.x0 * scale, my = (h - bh * scale) / 2 - b.y0 * scale;
    const c = document.createElement("canvas");
    c.width = Math.round(w * dpr);
    c.height = Math.round(h * dpr);
    const ctx = c.getContext("2d")!;
    // Pixels written directly (a 90k-node scene in tens of ms, where 90k canvas rects took
    // 200): open groups first (they hold the rest and share one colour), then the other nodes.
    const img = ctx.createImageData(c.width, c.height);
    const px = new Uint32Array(img.data.buffer);
    const rgba = new Rgba(palette.background);
    const k = dpr * scale, ox = dpr * mx, oy = dpr * my;
    fillBox(px, c.width, c.height, b.x0 * k + ox, b.y0 * k + oy, b.x1 * k + ox, b.y1 * k + oy, rgba.of(palette.background));
    for (const pass of [true, false]) {
      const open = pass ? rgba.of(palette.expandedFill) : 0;
      for (let i = 0; i < model.nodes.length; i++) {
        if ((i & 1023) === 0 && slicer.due()) await slicer.yield();
        const n = model.nodes[i];
        if (n.expanded !== pass) continue;
        const x0 = (n.x - n.width / 2) * k + ox, y0 = (n.y - n.height / 2) * k + oy;
        fillBox(px, c.width, c.height, x0, y0, x0 + Math.max(n.width * k, 1), y0 + Math.max(n.height * k, 1), pass ? open : rgba.of(fill(i)));
      }
    }
    ctx.putImageData(img, 0, 0);
    this.canvas.width = c.width;
    this.canvas.height = c.height;
    [this.model, this.cache, this.scale, this.ox, this.oy] = [model, c, scale, mx, my];
  }

  draw(vp: Viewport, mainW: number, mainH: number, palette: Palette): void {
    const ctx = this.canvas.getContext("2d")!;
    const dpr = window.devicePixelRatio || 1;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    if (!this.cache) {  // no graph (an empty logdir, an error): no empty frame in the corner
      this.canvas.style.visibility = "hidden";
      this.canvas.dataset.hidden = "true";
      return;
    }
    const r = vp.visible(mainW, mainH);
    // the whole scene on screen (a first view): the minimap would only cover part of it
    const b = this.model?.bounds;
    const whole = !!b && r.x0 <= b.x0 && r.y0 <= b.y0 && r.x1 >= b.x1 && r.y1 >= b.y1;
    this.canvas.style.visibility = whole ? "hidden" : "";
    this.canvas.dataset.hidden = String(whole);
    ctx.drawImage(this.cache, 0, 0);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.strokeStyle = palette.selected;
    ctx.lineWidth = 1.5;
    const x = r.x0 * this.scale + this.ox, y = r.y0 * this.scale + this.oy;
    ctx.strokeRect(x, y, (r.x1 - r.x0) * this.scale, (r.y1 - r.y0) * this.scale);
  }
}

/** CSS colours as little-endian RGBA words, translucent ones blended over a background. */
class Rgba {
  private cache = new Map<string, number>();
  private readonly probe = document.createElement("canvas").getContext("2d", { willReadFrequently: true })!;
  private readonly under: number[];
  constructor(background: string) {
    this.under = this.parse(background).slice(0, 3);
  }
  of(css: string): number {
    let v = this.cache.get(css);
    if (v === undefined) {
      const [r, g, b, a] = this.parse(css);
      const mix = (c: number, u: number) => Math.round(c * a + u * (1 - a));
      v = ((255 << 24) | (mix(b, this.under[2]) << 16) | (mix(g, this.under[1]) << 8) | mix(r, this.under[0])) >>> 0;
      this.cache.set(css, v);
    }
    return v;
  }
  private parse(css: string): number[] {
    const p = this.probe;
    p.clearRect(0, 0, 1, 1);
    p.fillStyle = css;
    p.fillRect(0, 0, 1, 1);
    const d = p.getImageData(0, 0, 1, 1).data;
    return [d[0], d[1], d[2], d[3] / 255]; // getImageData is not premultiplied
  }
}

/** Fills the pixels whose centres lie in [x0, x1) x [y0, y1) (at least one pixel). */
function fillBox(px: Uint32Array, w: number, h: number, x0: number, y0: number, x1: number, y1: number, v: number): void {
  const a = Math.max(0, Math.round(x0)), b = Math.min(w, Math.max(Math.round(x1), Math.round(x0) + 1));
  const c = Math.max(0, Math.round(y0)), d = Math.min(h, Math.max(Math.round(y1), Math.round(y0) + 1));
  for (let y = c; y < d; y++) px.fill(v, y * w + a, y * w + b);
}
