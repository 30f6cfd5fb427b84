// Moving the view to what the user asks for: fit to screen (the first fit shows the main
// graph whole) and jump to a node anywhere (a search hit: app/search.ts), opening the groups that hold it by the server's ancestry (SearchHit.ancestors:
// names lie about nesting after scope inference and wide-group splits).
import * as api from "../api/client";
import type { GraphRef, SearchHit } from "../api/types";
import type { Rect, SceneModel } from "../render/model";
import { Viewport } from "../render/viewport";

export interface NavHost {
  readonly vp: Viewport;
  ref(): GraphRef | null;
  view(): api.ViewOptions;
  model(): SceneModel | null;
  screen(): [number, number]; // canvas size in CSS px
  expanded(): string[];
  /** Opens these groups too and loads the scene; false when the load failed or was superseded. */
  expand(groups: string[]): Promise<boolean>;
  select(name: string): void;
  showError(message: string): void;
}

/** Fit the main (non-extracted) graph so a TF2 trace's tall side column cannot shrink it: the
 * first view shows the whole model (issue 23). The server folds a flow taller than the window a
 * first view has into bands side by side (layout/scene/fold.py), so that this fit keeps labels
 * >= READABLE_LABEL_PX; a first view that is still too big (a JIT trace's loose glue ops) opens
 * whole, smaller, rather than zoomed in on one end of it. */
export function fitMain(vp: Viewport, m: SceneModel, w: number, h: number, corner: Corner = null): void {
  const main = m.nodes.filter((n) => !n.extracted && n.parent === null);
  if (!main.length) return fitClear(vp, m, m.bounds, w, h, 20, corner);
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  for (const n of main) {
    x0 = Math.min(x0, n.x - n.width / 2); y0 = Math.min(y0, n.y - n.height / 2);
    x1 = Math.max(x1, n.x + n.width / 2); y1 = Math.max(y1, n.y + n.height / 2);
  }
  fitClear(vp, m, { x0, y0, x1, y1 }, w, h, FIRST_FIT_PAD, corner);
}

/** A box over the canvas's bottom-left corner (the legend): its [width, height] in CSS px from
 * that corner, or null when there is none. */
export type Corner = [number, number] | null;

/** Fits `r` (world) into the canvas; when a node of `m` drawn as a box (not an open group's
 * frame) then lies under `corner` (the legend hid a ConvNeXt trace's `graph_[1-364]`), fits it
 * again in the room above the corner or right of it, whichever shows it larger. */
export function fitClear(vp: Viewport, m: SceneModel, r: Rect, w: number, h: number, pad: number,
                         corner: Corner): void {
  vp.fit(r, w, h, pad);
  if (!corner) return;
  const [cw, ch] = corner;
  const under = m.nodes.some((n) => {
    if (n.expanded) return false;
    const [sx0, sy0] = vp.toScreen(n.x - n.width / 2, n.y - n.height / 2);
    const [sx1, sy1] = vp.toScreen(n.x + n.width / 2, n.y + n.height / 2);
    return sx0 < cw && sx1 > 0 && sy1 > h - ch && sy0 < h;
  });
  if (!under) return;
  const right = Viewport.fitScale(r, w - cw, h, pad) > Viewport.fitScale(r, w, h - ch, pad);
  vp.fit(r, w, h, pad, undefined, right ? cw : 0, right ? 0 : ch);
}

/** The first fit's margin (CSS px): the server's fold window (SceneOptions.fold_window) assumes it. */
export const FIRST_FIT_PAD = 12;

/** Selects a node anywhere: expands the groups holding it, then pans to it. */
export async function jump(host: NavHost, name: string, ancestors?: string[]): Promise<void> {
  const ref = host.ref();
  if (!host.model() || !ref) return;
  if (!host.model()!.node(name)) {
    if (!ancestors) {
      const hit = await lookup(ref, host.view(), name);
      if (!hit) {
        host.showError(`Node ${name} is not in this graph.`);
        return;
      }
      name = hit.name;
      ancestors = hit.ancestors;
    }
    const open = host.expanded();
    const closed = ancestors.filter((g) => !open.includes(g));
    if (closed.length && !host.model()!.node(name)) {
      if (!(await host.expand(closed))) return;
    }
  }
  const m = host.model()!;
  // not visible even now (removed, or inside a series shown collapsed): its deepest visible group
  const target = m.node(name) ? name : [...(ancestors ?? [])].reverse().find((g) => m.node(g));
  if (!target) {
    host.showError(`Node ${name} is not in this graph view.`);
    return;
  }
  const n = m.node(target)!;
  const [w, h] = host.screen();
  if (host.vp.k < 0.8) host.vp.k = 1;
  host.vp.centerOn(n.x, n.y, w, h);
  host.select(target);
}

/** The server's search hit for exactly this node (an input `x:1` names output 1 of `x`). */
async function lookup(ref: GraphRef, view: api.ViewOptions, name: string): Promise<SearchHit | null> {
  for (const candidate of [name, name.replace(/:\d+$/, "")]) {
    try {
      const ans = await api.fetchSearch(ref, `(?-i)^${escapeRegex(candidate)}$`, "", view, true);
      const hit = ans.hits.find((h) => h.name === candidate);
      if (hit) return hit;
    } catch {
      /* try the next spelling */
    }
  }
  return null;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
