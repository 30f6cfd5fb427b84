// World <-> screen transform: screen = world * k + (tx, ty). Pure arithmetic, no DOM.
import type { Rect } from "./model";

export const MIN_SCALE = 0.002;
export const MAX_SCALE = 8;

export class Viewport {
  k = 1;
  tx = 0;
  ty = 0;
  toScreen(x: number, y: number): [number, number] {
    return [x * this.k + this.tx, y * this.k + this.ty];
  }
  toWorld(sx: number, sy: number): [number, number] {
    return [(sx - this.tx) / this.k, (sy - this.ty) / this.k];
  }
  visible(width: number, height: number, margin = 0): Rect {
    const [x0, y0] = this.toWorld(-margin, -margin);
    const [x1, y1] = this.toWorld(width + margin, height + margin);
    return { x0, y0, x1, y1 };
  }
  /** Zoom by factor keeping the screen point (sx, sy) fixed. */
  zoomAt(factor: number, sx: number, sy: number): void {
    const k = Math.max(MIN_SCALE, Math.min(MAX_SCALE, this.k * factor));
    const [wx, wy] = this.toWorld(sx, sy);
    this.k = k;
    this.tx = sx - wx * k;
    this.ty = sy - wy * k;
  }
  pan(dx: number, dy: number): void {
    this.tx += dx;
    this.ty += dy;
  }
  /** Show the whole rectangle, centred, never magnified beyond maxScale; the `left` px of the
   * canvas's left side and the `bottom` px of its foot are left out (centred in the rest). */
  fit(r: Rect, width: number, height: number, pad = 20, maxScale = 1.5, left = 0, bottom = 0): void {
    this.k = Viewport.fitScale(r, width - left, height - bottom, pad, maxScale);
    this.tx = left + (width - left) / 2 - ((r.x0 + r.x1) / 2) * this.k;
    this.ty = (height - bottom) / 2 - ((r.y0 + r.y1) / 2) * this.k;
  }
  /** The scale `fit` shows `r` at in a `width` x `height` room. */
  static fitScale(r: Rect, width: number, height: number, pad = 20, maxScale = 1.5): number {
    const w = Math.max(1, r.x1 - r.x0), h = Math.max(1, r.y1 - r.y0);
    return Math.max(MIN_SCALE, Math.min(maxScale, (width - 2 * pad) / w, (height - 2 * pad) / h));
  }
  /** Centre the world point on screen at the current scale. */
  centerOn(x: number, y: number, width: number, height: number): void {
    this.tx = width / 2 - x * this.k;
    this.ty = height / 2 - y * this.k;
  }
}
