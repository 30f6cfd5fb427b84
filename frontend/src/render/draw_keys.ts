// What a drawing depends on, as string keys a cached drawing is checked against: the panning
// shift's (render/pan_shift.ts: everything but the view's translation) and the tiles'
// (render/tiles.ts: everything but the view, the selection and the hover). Objects (scene, trace
// sets, removed set, colourer, palette) count by identity: a number each, kept in a WeakMap.
import type { Colorer, Palette } from "./colors";
import type { SceneModel } from "./model";
import type { DrawState } from "./renderer";
import type { Viewport } from "./viewport";

/** The renderer's colours. */
export interface Look {
  readonly palette: Palette;
  readonly colorer: Colorer | null;
  readonly dark: boolean;
}

export class DrawKeys {
  private readonly ids = new WeakMap<object, number>();
  private nextId = 1;

  private id(o: object | null | undefined): number {
    if (!o) return 0;
    let v = this.ids.get(o);
    if (v === undefined) this.ids.set(o, (v = this.nextId++));
    return v;
  }

  /** Everything a drawing depends on except the view's translation. */
  content(model: SceneModel | null, vp: Viewport, st: DrawState, canvas: HTMLCanvasElement, look: Look): string {
    const id = (o: object | null | undefined) => this.id(o);
    return JSON.stringify([id(model), vp.k, canvas.width, canvas.height, window.devicePixelRatio || 1,
      st.selected, st.hover, id(st.traced), st.traced?.size ?? -1, id(st.tracedEdges), st.tracedEdges?.size ?? -1,
      id(st.hidden), st.hidden.size, id(look.colorer), look.colorer?.mode ?? "", id(look.palette), look.dark]);
  }

  /** What the tiles show: everything but the view, the selection and the hover. */
  tiles(model: SceneModel, st: DrawState, look: Look, dpr: number): string {
    const id = (o: object | null) => this.id(o);
    return JSON.stringify([id(model), id(st.traced), st.traced?.size ?? -1, id(st.tracedEdges),
      id(st.hidden), st.hidden.size, id(look.colorer), look.colorer?.mode ?? "", id(look.palette), dpr]);
  }
}
