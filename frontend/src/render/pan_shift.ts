// Panning: while only the view's translation changes (a drag), the last full drawing is shifted
// (a bitmap copy, ~1 ms whatever the scene size) instead of drawn again. A full drawing refills
// the strips the shift uncovers every PAN_REFRESH_MS; any other change (its key: render/draw_keys.ts)
// draws in full at once. Part of render/renderer.ts's draw().
import type { DrawStats } from "./renderer";
import type { Viewport } from "./viewport";

const PAN_REFRESH_MS = 120; // while dragging, a full drawing at most this often

export class PanShift {
  /** the last full drawing: its key, translation, time, a copy of the canvas and its stats */
  private last: { key: string; tx: number; ty: number; at: number; bitmap: HTMLCanvasElement; stats: DrawStats } | null = null;

  constructor(private readonly canvas: HTMLCanvasElement, private readonly size: () => [number, number]) {}

  /** Draws the last full drawing shifted by the view's move when its key is `key`, the move is
   * under half the canvas and the drawing younger than PAN_REFRESH_MS (`t0` is now); returns the
   * stats of the drawing, or null: a full drawing is due. */
  shift(ctx: CanvasRenderingContext2D, key: string, vp: Viewport, background: string, t0: number): DrawStats | null {
    const c = this.last;
    if (!c || c.key !== key) return null;
    const dx = vp.tx - c.tx, dy = vp.ty - c.ty;
    const [cw, ch] = this.size();
    if ((dx !== 0 || dy !== 0) && Math.abs(dx) < cw / 2 && Math.abs(dy) < ch / 2 && t0 - c.at < PAN_REFRESH_MS) {
      const dpr = window.devicePixelRatio || 1;
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.fillStyle = background;
      ctx.fillRect(0, 0, this.canvas.width, this.canvas.height);
      ctx.drawImage(c.bitmap, Math.round(dx * dpr), Math.round(dy * dpr));
      return { ...c.stats, ms: performance.now() - t0, edgeMs: 0 };
    }
    return null;
  }

  /** Keeps the full drawing just made (a copy of the canvas) for the next shifts. */
  remember(key: string, vp: Viewport, stats: DrawStats): void {
    this.last = { key, tx: vp.tx, ty: vp.ty, at: performance.now(), bitmap: this.snapshot(), stats };
  }

  forget(): void {
    this.last = null;
  }

  /** A copy of the canvas as drawn (in the last copy's bitmap when the size is the same). */
  private snapshot(): HTMLCanvasElement {
    const old = this.last?.bitmap;
    const b = old && old.width === this.canvas.width && old.height === this.canvas.height ? old : document.createElement("canvas");
    b.width = this.canvas.width;
    b.height = this.canvas.height;
    b.getContext("2d", { alpha: false })!.drawImage(this.canvas, 0, 0);
    return b;
  }
}
