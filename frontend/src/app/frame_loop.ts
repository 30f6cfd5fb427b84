// One drawing per animation frame: the scene through the renderer, then the minimap (and another
// frame while the renderer still has tiles to draw). The minimap's scene bitmap is rebuilt only
// when marked dirty (new scene, colours, theme, removed nodes, resize), in time slices after the
// frame so a big scene's first paint is not delayed; pan and zoom only redraw its viewport
// rectangle. Draw stats go to the view's dataset (the page's body for the main view).
import type { Minimap } from "../render/minimap";
import { markOnce } from "../marks";
import type { SceneModel } from "../render/model";
import { SLICE_MS, Slicer, Superseded } from "../render/slicer";
import type { DrawState, Renderer } from "../render/renderer";
import type { Viewport } from "../render/viewport";

/** Runs fn; leaves a performance measure (visible to benches and devtools) when it took > 16 ms. */
export function timed<T>(name: string, fn: () => T): T {
  const t0 = performance.now();
  const out = fn();
  if (performance.now() - t0 > 16) performance.measure(name, { start: t0, end: performance.now() });
  return out;
}

export class FrameLoop {
  private frame = 0;
  private miniDirty = true;
  private miniTimer = 0;
  private miniToken = 0;
  private settleTimer = 0;
  /** the canvas shows nothing yet (the page background Renderer.clear filled it with on
   * creation, resize and theme change): a frame without a scene may skip it */
  private blank = true;

  constructor(
    private readonly renderer: Renderer,
    private readonly minimap: Minimap,
    private readonly vp: Viewport,
    private readonly st: () => DrawState,
    private readonly model: () => SceneModel | null,
    /** where the draw stats go (the main view: the page's body) */
    private readonly data: DOMStringMap = document.body.dataset,
  ) {}

  /** The minimap's bitmap is out of date: rebuild it after the next frame. */
  minimapDirty(): void {
    this.miniDirty = true;
  }

  redraw(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      const t0 = performance.now();
      this.renderer.resize();
      const model = this.model();
      // Before the first scene there is nothing to clear: no canvas work (a full-canvas fill
      // costs ms on the main thread the first scene is waiting for).
      const skip = !model && this.blank;
      const stats = skip ? { nodes: 0, edges: 0, labels: 0, ms: 0, edgeMs: 0 } : timed("gx:draw", () => this.renderer.draw(model, this.vp, this.st()));
      this.blank = skip;
      if (this.renderer.pending) this.redraw(); // tiles still missing: more of them next frame
      if (this.renderer.shifted) {
        // a drag shows shifted copies of the last drawing: draw in full once it stops
        window.clearTimeout(this.settleTimer);
        this.settleTimer = window.setTimeout(() => {
          this.renderer.invalidate();
          this.redraw();
        }, 150);
      }
      if (this.miniDirty && !this.miniTimer && !skip) this.miniTimer = window.setTimeout(() => void this.rebuildMinimap(), 0);
      const [w, h] = this.renderer.size();
      this.minimap.draw(this.vp, w, h, this.renderer.palette);
      const d = this.data;
      if (stats.nodes > 0) markOnce("paint");
      d.drawnNodes = String(stats.nodes);
      d.drawnEdges = String(stats.edges);
      d.drawnLabels = String(stats.labels);
      d.shifted = String(this.renderer.shifted);
      d.drawPath = this.renderer.path;
      d.tilesMissing = String(this.renderer.lastTiles?.missing ?? 0);
      if (this.renderer.shifted) d.shiftedFrames = String(Number(d.shiftedFrames ?? 0) + 1);
      d.drawMs = stats.ms.toFixed(1);
      d.drawEdgeMs = stats.edgeMs.toFixed(1);
      d.maxDrawMs = Math.max(Number(d.maxDrawMs ?? 0), performance.now() - t0).toFixed(1);
      d.scale = this.vp.k.toFixed(4);
      d.frames = String(Number(d.frames ?? 0) + 1);
    });
  }

  /** Rebuilds the minimap's bitmap in short slices (SLICE_MS); a newer rebuild supersedes this one. */
  private async rebuildMinimap(): Promise<void> {
    this.miniTimer = 0;
    this.miniDirty = false;
    const token = ++this.miniToken;
    const model = this.model();
    const hidden = this.st().hidden;
    const col = this.renderer.colorer;
    const pal = this.renderer.palette;
    const t0 = performance.now();
    const slicer = new Slicer(SLICE_MS, () => token === this.miniToken);
    try {
      await this.minimap.rebuild(model, pal, (i) => {
        const n = model!.nodes[i];
        if (hidden.has(n.name)) return pal.background;
        return col?.fill(n) ?? (n.kind === "op" ? pal.opStroke : pal.metaFill);
      }, slicer);
    } catch (e) {
      if (e instanceof Superseded) return;
      throw e;
    }
    this.data.minimapMs = (performance.now() - t0).toFixed(1);
    const [w, h] = this.renderer.size();
    this.minimap.draw(this.vp, w, h, this.renderer.palette);
  }
}
