// Read-only state and a few shortcuts for tests and the bench, on window.graphExplorer (and the
// second pane's on window.graphExplorer.split: nodes(), viewport(), center(name)):
// nodes() with on-screen centres, viewport(), center(name), toggle(name), setExpanded(names),
// drawList() (every text box and node box the renderer drew last, canvas CSS px, and whether it
// drew every item or, zoomed out on a big scene, cached tiles).
import type { PlacedLabel } from "../render/labels";
import type { SceneModel } from "../render/model";
import type { DrawnNode } from "../render/renderer";
import type { TileStats } from "../render/tiles";
import type { Viewport } from "../render/viewport";

export interface HookHost {
  readonly vp: Viewport;
  readonly canvas: HTMLCanvasElement;
  model(): SceneModel | null;
  screen(): [number, number];
  toggle(name: string): void;
  setExpanded(names: string[]): void;
  redraw(): void;
  /** the renderer's draw list of its last drawing (screen CSS px of the canvas): its path
   * ("full": every item, listed; "tiles": a far view of a big scene from cached tiles, no list) */
  drawList(): { labels: PlacedLabel[]; nodes: DrawnNode[]; path: "full" | "tiles"; tiles: TileStats | null };
}

export function installTestHooks(host: HookHost): void {
  (window as unknown as { graphExplorer: unknown }).graphExplorer = {
    toggle: (name: string) => host.toggle(name),
    /** open exactly these groups (bench/tests: a big scene without clicking through it) */
    setExpanded: (names: string[]) => host.setExpanded([...names]),
    nodes: () => debugNodes(host),
    /** texts and node boxes of the last full drawing, read back from the renderer itself */
    drawList: () => host.drawList(),
    viewport: () => ({ k: host.vp.k, tx: host.vp.tx, ty: host.vp.ty }),
    center: (name: string) => {
      const n = host.model()?.node(name);
      if (!n) return false;
      const [w, h] = host.screen();
      host.vp.centerOn(n.x, n.y, w, h);
      host.redraw();
      return true;
    },
  };
}

/** What the hooks of a second view need. */
export type PaneHookHost = Pick<HookHost, "vp" | "canvas" | "model" | "screen" | "redraw">;

/** Read-only hooks of another graph view on window.graphExplorer[name]: nodes(), viewport(), center(name). */
export function installPaneHooks(name: string, host: PaneHookHost): void {
  const hooks = (window as unknown as { graphExplorer: Record<string, unknown> }).graphExplorer;
  hooks[name] = {
    nodes: () => debugNodes(host),
    viewport: () => ({ k: host.vp.k, tx: host.vp.tx, ty: host.vp.ty }),
    center: (node: string) => {
      const n = host.model()?.node(node);
      if (!n) return false;
      const [w, h] = host.screen();
      host.vp.centerOn(n.x, n.y, w, h);
      host.redraw();
      return true;
    },
  };
}

/** Scene nodes with their on-screen centres (page coordinates of the iframe). */
function debugNodes(host: PaneHookHost): object[] {
  const m = host.model();
  if (!m) return [];
  const r = host.canvas.getBoundingClientRect();
  const vp = host.vp;
  return m.nodes.map((n) => {
    const [sx, sy] = vp.toScreen(n.x, n.y);
    return {
      name: n.name, label: n.label, kind: n.kind, op: n.op, expanded: n.expanded, cardinality: n.cardinality,
      parent: n.parent, extracted: n.extracted, x: r.left + sx, y: r.top + sy,
      w: n.width * vp.k, h: n.height * vp.k,
    };
  });
}
