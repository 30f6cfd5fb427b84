// Minimap: the whole scene drawn once into an offscreen bitmap (rebuilt only when the scene,
// colours, theme or removed nodes change; one path per colour), plus the viewport rectangle
// drawn on top each frame: panning and zooming only copy the bitmap and stroke the rectangle.
// Dragging / clicking in it moves the main view.
import type { Palette } from "./colors";
import type { SceneModel } from "./model";
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

  rebuild(model: SceneModel | null, palette: Palette, fill: (i: number) => string): void {
    this.model = model;
    const w = this.canvas.clientWidth || 200, h = this.canvas.clientHeight || 150;
    const dpr = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(h * dpr);
    if (!model) {
      this.cache = null;
      return;
    }
    const b = model.bounds;
    const bw = Math.max(1, b.x1 - b.x0), bh = Math.max(1, b.y1 - b.y0);
    this.scale = Math.min((w - 8) / bw, (h - 8) / bh);
    this.ox = (w - bw * this.scale) / 2 - b.x0 * this.scale;
    this.oy = (h - bh * this.scale) / 2 - b.y0 * this.scale;
    const c = document.createElement("canvas");
    c.width = this.canvas.width;
    c.height = this.canvas.height;
    const ctx = c.getContext("2d")!;
    ctx.setTransform(dpr * this.scale, 0, 0, dpr * this.scale, dpr * this.ox, dpr * this.oy);
    ctx.fillStyle = palette.background;
    ctx.fillRect(b.x0, b.y0, bw, bh);
    const minSide = 1 / this.scale;
    // One path per fill colour instead of a fillStyle switch per node: open groups first (they
    // hold the rest and share one colour), then the other nodes by colour; these never overlap.
    const byFill = new Map<string, number[]>();
    const open: number[] = [];
    for (let i = 0; i < model.nodes.length; i++) {
      if (model.nodes[i].expanded) {
        open.push(i);
        continue;
      }
      const f = fill(i);
      const list = byFill.get(f);
      if (list) list.push(i);
      else byFill.set(f, [i]);
    }
    const paint = (color: string, idx: number[]) => {
      ctx.fillStyle = color;
      ctx.beginPath();
      for (const i of idx) {
        const n = model.nodes[i];
        ctx.rect(n.x - n.width / 2, n.y - n.height / 2, Math.max(n.width, minSide), Math.max(n.height, minSide));
      }
      ctx.fill();
    };
    if (open.length) paint(palette.expandedFill, open);
    for (const [color, idx] of byFill) paint(color, idx);
    this.cache = c;
  }

  draw(vp: Viewport, mainW: number, mainH: number, palette: Palette): void {
    const ctx = this.canvas.getContext("2d")!;
    const dpr = window.devicePixelRatio || 1;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    if (!this.cache) return;
    ctx.drawImage(this.cache, 0, 0);
    const r = vp.visible(mainW, mainH);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.strokeStyle = palette.selected;
    ctx.lineWidth = 1.5;
    const x = r.x0 * this.scale + this.ox, y = r.y0 * this.scale + this.oy;
    ctx.strokeRect(x, y, (r.x1 - r.x0) * this.scale, (r.y1 - r.y0) * this.scale);
  }
}
