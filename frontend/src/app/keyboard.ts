// Keyboard navigation. With a node selected: ArrowUp / ArrowDown move along the drawn
// edges to the neighbour above / below (the rank direction: the layout draws inputs below
// their consumers, so Up walks towards the outputs), ArrowLeft / ArrowRight to the nearest
// sibling (same parent group) on that side, Enter expands a group, Backspace / Escape collapse
// the group holding the selection (Escape at top level clears it), "/" focuses the search, "f"
// fits, "?" shows the keys. With nothing selected an arrow key selects the node nearest the
// view's centre. The canvas is reachable with Tab (visible focus ring) and an aria-live region
// announces the selected node. Bridges and stubs (the scene's edge helpers) are walked through.
// With the second pane open (app/split_pane.ts) the keys act on the pane whose canvas was last
// focused or clicked; "/" and "?" are the page's.
import type { SceneNode } from "../api/types";
import type { SceneModel } from "../render/model";
import { el } from "../ui/dom";

export interface KeyHost {
  model(): SceneModel | null;
  selected(): string | null;
  select(name: string | null): void;
  isGroup(name: string): boolean;
  isExpanded(name: string): boolean;
  toggleExpand(name: string): void;
  fit(): void;
  focusSearch(): void;
  /** pans so the node is on screen */
  reveal(name: string): void;
  /** the world point at the centre of the view */
  center(): [number, number];
}

export const KEYS: [string, string][] = [
  ["↑ / ↓", "move along an edge to the node above / below"],
  ["← / →", "move to the next node in the same group"],
  ["Enter", "expand the selected group"],
  ["Backspace / Esc", "collapse to the parent group (Esc at top level: clear)"],
  ["/", "search (then Enter: next hit, Shift+Enter: previous)"],
  ["f", "fit to screen"],
  ["Tab", "focus the graph"],
  ["?", "show / hide these keys"],
];

const HELPERS = new Set(["bridge", "stub"]);
const SIDE = new Set(["in_embedding", "out_embedding"]);

/**
 * The neighbours of node `i` across drawn edges. An edge into an expanded group continues at
 * the group's bridge for `i` (its `of` names `i`); a bridge or stub stands for the node in its
 * `of` (the outer end), else is walked through.
 */
function neighbours(m: SceneModel, i: number): number[] {
  const me = m.nodes[i].name;
  const out = new Set<number>();
  const seen = new Set<number>([i]);
  let frontier = [i];
  for (let hop = 0; hop < 8 && frontier.length; hop++) {
    const next: number[] = [];
    const visit = (k: number) => {
      if (seen.has(k)) return;
      seen.add(k);
      const n = m.nodes[k];
      if (n.expanded) {
        const bridges = m.nodes.map((_, j) => j).filter((j) => HELPERS.has(m.nodes[j].kind) && m.nodes[j].of === me
          && m.nodes[j].name.startsWith(n.name + "/"));
        if (bridges.length) next.push(...bridges.filter((j) => !seen.has(j)).map((j) => (seen.add(j), j)));
        else out.add(k);
      } else if (HELPERS.has(n.kind)) {
        const of = n.of !== null ? m.byName.get(n.of) : undefined;
        if (of !== undefined && of !== i) visit(of);
        else next.push(k);
      } else out.add(k);
    };
    for (const j of frontier)
      for (const e of [...m.edgesInto(j), ...m.edgesOutOf(j)]) {
        const edge = m.edges[e];
        for (const end of [edge.source, edge.target]) {
          const k = m.byName.get(end);
          if (k !== undefined) visit(k);
        }
      }
    frontier = next;
  }
  return [...out];
}

/** Where an arrow key moves the selection from `name` (null: nowhere to go). */
export function arrowTarget(m: SceneModel, name: string, key: string): string | null {
  const i = m.byName.get(name);
  if (i === undefined) return null;
  const n = m.nodes[i];
  let pool: SceneNode[];
  if (key === "ArrowUp" || key === "ArrowDown") {
    const up = key === "ArrowUp";
    pool = neighbours(m, i).map((k) => m.nodes[k]).filter((c) => (up ? c.y < n.y : c.y > n.y));
    const main = pool.filter((c) => !SIDE.has(c.kind));
    if (main.length) pool = main;
    pool.sort((a, b) => Math.abs(a.x - n.x) - Math.abs(b.x - n.x) || Math.abs(a.y - n.y) - Math.abs(b.y - n.y));
  } else {
    const right = key === "ArrowRight";
    pool = m.nodes.filter((c) => c.parent === n.parent && c.name !== n.name && !HELPERS.has(c.kind)
      && !SIDE.has(c.kind) && (right ? c.x > n.x : c.x < n.x));
    // the nearest on that side, nodes of about the same rank first
    pool.sort((a, b) => Math.abs(a.y - n.y) * 2 + Math.abs(a.x - n.x) - (Math.abs(b.y - n.y) * 2 + Math.abs(b.x - n.x)));
  }
  return pool.length ? pool[0].name : null;
}

/** The node nearest the point (x, y) among the ones not drawn as a box around others. */
function nearest(m: SceneModel, x: number, y: number): string | null {
  let best: SceneNode | null = null;
  let bestD = Infinity;
  for (const n of m.nodes) {
    if (n.expanded || HELPERS.has(n.kind) || n.extracted) continue;
    const d = (n.x - x) ** 2 + (n.y - y) ** 2;
    if (d < bestD) {
      bestD = d;
      best = n;
    }
  }
  return best?.name ?? null;
}

export class Keyboard {
  readonly live = el("div", { className: "gx-sr", "aria-live": "polite", role: "status", "data-live": "" });
  readonly helpBtn = el("button", { text: "?", "data-action": "help", title: "Keyboard shortcuts (?)", "aria-expanded": "false" });
  readonly help = el("div", { className: "gx-help", "data-help": "", role: "dialog", "aria-label": "Keyboard shortcuts" });

  private active: KeyHost;

  constructor(private readonly host: KeyHost, canvas: HTMLCanvasElement) {
    this.active = host;
    this.follow(host, canvas, "main", () => true);
    const table = el("table");
    for (const [k, what] of KEYS) table.appendChild(el("tr", {}, el("td", { className: "gx-key", text: k }), el("td", { text: what })));
    this.help.append(el("h3", { text: "Keyboard" }), table);
    this.helpBtn.addEventListener("click", () => this.toggleHelp());
    window.addEventListener("keydown", (ev) => this.onKey(ev));
  }

  /** Another pane's canvas: the keys act on `pane` once its canvas is focused or clicked, while
   * `shown()` holds (then on the main view again). */
  addPane(pane: KeyHost, canvas: HTMLCanvasElement, shown: () => boolean): void {
    this.follow(pane, canvas, "split", shown);
  }

  private follow(target: KeyHost, canvas: HTMLCanvasElement, name: string, shown: () => boolean): void {
    canvas.tabIndex = 0;
    canvas.setAttribute("role", "application");
    canvas.setAttribute("aria-label", "Graph. Arrow keys move the selection, Enter expands, Escape collapses, ? lists the keys.");
    const take = () => {
      this.active = target;
      this.shown = shown;
      document.body.dataset.keysPane = name;
    };
    canvas.addEventListener("focus", take);
    canvas.addEventListener("pointerdown", take);
  }

  private shown: () => boolean = () => true;

  /** The view the keys act on: the pane last focused, or the main view once that pane is closed. */
  private target(): KeyHost {
    if (this.active !== this.host && !this.shown()) {
      this.active = this.host;
      document.body.dataset.keysPane = "main";
    }
    return this.active;
  }

  toggleHelp(force?: boolean): void {
    const on = force ?? !this.help.classList.contains("gx-on");
    this.help.classList.toggle("gx-on", on);
    this.helpBtn.setAttribute("aria-expanded", String(on));
    document.body.dataset.help = on ? "open" : "";
  }

  /** Says which node is selected to screen readers (text only). */
  announce(name: string | null): void {
    const n = name ? this.target().model()?.node(name) : undefined;
    this.live.textContent = name ? `Selected ${n?.kind === "meta" || n?.kind === "series" ? "group" : "node"} ${name}${n?.op ? `, ${n.op}` : ""}` : "Selection cleared";
  }

  private onKey(ev: KeyboardEvent): void {
    const t = ev.target;
    if (t instanceof HTMLInputElement || t instanceof HTMLSelectElement || t instanceof HTMLTextAreaElement) return;
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const h = this.target();
    const m = h.model();
    const sel = h.selected();
    switch (ev.key) {
      case "f":
      case "F":
        h.fit();
        break;
      case "/":
        h.focusSearch();
        break;
      case "?":
        this.toggleHelp();
        break;
      case "ArrowUp":
      case "ArrowDown":
      case "ArrowLeft":
      case "ArrowRight": {
        if (!m) return;
        const next = sel && m.node(sel) ? arrowTarget(m, sel, ev.key) : nearest(m, ...h.center());
        if (next) {
          h.select(next);
          h.reveal(next);
          if (h !== this.host) this.announce(next); // (the main view's select announces itself)
        }
        break;
      }
      case "Enter":
        if (sel && h.isGroup(sel) && !h.isExpanded(sel)) h.toggleExpand(sel);
        else return;
        break;
      case "Escape":
      case "Backspace": {
        if (this.help.classList.contains("gx-on") && ev.key === "Escape") {
          this.toggleHelp(false);
          break;
        }
        const n = sel ? m?.node(sel) : undefined;
        if (n && h.isExpanded(n.name)) h.toggleExpand(n.name); // an open group: close it
        else if (n?.parent) h.toggleExpand(n.parent); // collapse the group holding it (selects it)
        else if (ev.key === "Escape") h.select(null);
        else return;
        break;
      }
      default:
        return;
    }
    ev.preventDefault();
  }
}
