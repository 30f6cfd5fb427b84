// Moving the view to what the user asks for: fit to screen (the first fit keeps the main
// graph readable) and jump to a node anywhere (a search hit: app/search.ts), opening the groups that hold it by the server's ancestry (SearchHit.ancestors:
// names lie about nesting after scope inference and wide-group splits).
import * as api from "../api/client";
import type { GraphRef, SearchHit } from "../api/types";
import type { SceneModel } from "../render/model";
import type { Viewport } from "../render/viewport";
import { OP_LABEL_PX, READABLE_LABEL_PX } from "../render/renderer";

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

/** Fit the main (non-extracted) graph so a TF2 trace's tall side column cannot shrink it. If the
 * fit is too small for labels (an op's label under READABLE_LABEL_PX on screen), open at the
 * readable zoom on the graph's entry instead (rankdir BT: the bottom of the main graph, centred
 * on its lowest node); the minimap shows the whole. */
export function fitMain(vp: Viewport, m: SceneModel, w: number, h: number): void {
  const main = m.nodes.filter((n) => !n.extracted && n.parent === null);
  if (!main.length) return vp.fit(m.bounds, w, h);
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  let entry = main[0];
  for (const n of main) {
    x0 = Math.min(x0, n.x - n.width / 2); y0 = Math.min(y0, n.y - n.height / 2);
    x1 = Math.max(x1, n.x + n.width / 2); y1 = Math.max(y1, n.y + n.height / 2);
    if (n.y + n.height / 2 > entry.y + entry.height / 2) entry = n;
  }
  vp.fit({ x0, y0, x1, y1 }, w, h);
  const readable = READABLE_LABEL_PX / OP_LABEL_PX + 1e-3;
  if (vp.k < readable) {
    vp.k = readable;
    // the entry's bottom 30 px above the canvas bottom, horizontally centred on it, clamped so
    // that the view does not leave the graph's box when the graph is wider than the canvas
    let tx = w / 2 - entry.x * readable;
    tx = Math.min(20 - x0 * readable, Math.max(w - 20 - x1 * readable, tx));
    if ((x1 - x0) * readable < w - 40) tx = w / 2 - ((x0 + x1) / 2) * readable;
    vp.tx = tx;
    vp.ty = h - 30 - (entry.y + entry.height / 2) * readable;
  }
}

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
