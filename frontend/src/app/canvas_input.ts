// Canvas input: drag pans, wheel and two-finger pinch zoom at the pointer, click selects (or
// toggles a group on its +/- control), double-click expands/collapses, hover names the node.
// Works on the viewport and the scene it is given; all state changes go through CanvasHost.
import type { SceneModel } from "../render/model";
import type { Viewport } from "../render/viewport";

export interface CanvasHost {
  readonly vp: Viewport;
  model(): SceneModel | null;
  hidden(): ReadonlySet<string>; // removed from the main graph: not hit
  isGroup(name: string): boolean;
  select(name: string | null): void;
  toggleExpand(name: string): void;
  hover(name: string | null): void;
  redraw(): void;
}

/** Index of the (non-removed) node under a screen point, -1 for none. */
export function hitAt(host: CanvasHost, sx: number, sy: number): number {
  const m = host.model();
  if (!m) return -1;
  const [wx, wy] = host.vp.toWorld(sx, sy);
  const hidden = host.hidden();
  return m.hit(wx, wy, hidden.size ? (i) => hidden.has(m.nodes[i].name) : undefined);
}

function clickAt(host: CanvasHost, sx: number, sy: number): void {
  const i = hitAt(host, sx, sy);
  if (i < 0) {
    host.select(null);
    return;
  }
  const n = host.model()!.nodes[i];
  // the +/- control of a group toggles it
  if (host.isGroup(n.name)) {
    const [wx, wy] = host.vp.toWorld(sx, sy);
    const x0 = n.x - n.width / 2, y0 = n.y - n.height / 2;
    const onToggle = n.expanded
      ? Math.hypot(wx - (x0 + 7), wy - (y0 + 7)) <= 5.5
      : n.height * host.vp.k >= 12 && Math.hypot(wx - (x0 + 5), wy - n.y) <= 4.5;
    if (onToggle) {
      host.toggleExpand(n.name);
      return;
    }
  }
  host.select(n.name);
}

export function wireCanvas(c: HTMLCanvasElement, host: CanvasHost): void {
  const vp = host.vp;
  const pointers = new Map<number, { x: number; y: number }>();
  let downAt: { x: number; y: number } | null = null;
  let moved = false;
  let pinchDist = 0;
  const local = (ev: { clientX: number; clientY: number }) => {
    const r = c.getBoundingClientRect();
    return { x: ev.clientX - r.left, y: ev.clientY - r.top };
  };
  c.addEventListener("pointerdown", (ev) => {
    c.setPointerCapture(ev.pointerId);
    const p = local(ev);
    pointers.set(ev.pointerId, p);
    if (pointers.size === 1) {
      downAt = p;
      moved = false;
    } else if (pointers.size === 2) {
      const [a, b] = [...pointers.values()];
      pinchDist = Math.hypot(a.x - b.x, a.y - b.y);
      moved = true;
    }
  });
  c.addEventListener("pointermove", (ev) => {
    const p = local(ev);
    const prev = pointers.get(ev.pointerId);
    if (!prev) {
      const i = hitAt(host, p.x, p.y);
      host.hover(i >= 0 ? host.model()!.nodes[i].name : null);
      return;
    }
    pointers.set(ev.pointerId, p);
    if (pointers.size === 2) {
      const [a, b] = [...pointers.values()];
      const d = Math.hypot(a.x - b.x, a.y - b.y);
      if (pinchDist > 0) vp.zoomAt(d / pinchDist, (a.x + b.x) / 2, (a.y + b.y) / 2);
      pinchDist = d;
      host.redraw();
      return;
    }
    if (downAt && !moved && Math.hypot(p.x - downAt.x, p.y - downAt.y) > 3) {
      moved = true;
      c.classList.add("gx-panning");
    }
    if (moved) {
      vp.pan(p.x - prev.x, p.y - prev.y);
      host.redraw();
    }
  });
  const up = (ev: PointerEvent) => {
    pointers.delete(ev.pointerId);
    c.classList.remove("gx-panning");
    if (pointers.size === 0 && downAt && !moved && ev.type === "pointerup") clickAt(host, downAt.x, downAt.y);
    if (pointers.size === 0) downAt = null;
  };
  c.addEventListener("pointerup", up);
  c.addEventListener("pointercancel", up);
  c.addEventListener("dblclick", (ev) => {
    const p = local(ev);
    const i = hitAt(host, p.x, p.y);
    if (i >= 0) host.toggleExpand(host.model()!.nodes[i].name);
  });
  c.addEventListener(
    "wheel",
    (ev) => {
      ev.preventDefault();
      const p = local(ev);
      const unit = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 400 : 1;
      const speed = ev.ctrlKey ? 0.01 : 0.0015; // ctrlKey: trackpad pinch
      vp.zoomAt(Math.exp(-ev.deltaY * unit * speed), p.x, p.y);
      host.redraw();
    },
    { passive: false },
  );
}
