// Compare with another graph: the server's /diff of the graph shown (B) against a
// picked base graph (A), drawn on B's scene. Added nodes green, changed amber, the same grey
// (colour mode "diff", DiffColorer); removed nodes as ghost nodes (pale red, "− name") in a
// column right of the scene, since B has no place for them; a legend with the counts; a side
// list of the changes that jumps to each; and for a changed node its old and new op, device and
// attrs side by side in the info pane. Graph text is only ever set as textContent.
import * as api from "../api/client";
import type { DiffEntry, DiffStatus, GraphDiff, GraphRef, Listing, NodeDetails, SceneNode } from "../api/types";
import { Colorer, type LegendEntry } from "../render/colors";
import { SceneModel } from "../render/model";
import { SLICE_MS, Slicer } from "../render/slicer";
import { kindsOf } from "../ui/toolbar";
import { clear, el, option } from "../ui/dom";

/** Scene names of ghost nodes: this prefix + the removed node's name in A. */
export const GHOST_PREFIX = "__removed__/";
export const DIFF_COLOR: Record<Exclude<DiffStatus, "same">, string> = {
  added: "#34a853",
  changed: "#f9ab00",
  removed: "rgba(217,48,37,0.22)",
};
const MAX_GHOSTS = 200;
const MAX_LISTED_PER_STATUS = 150;
const MAX_STEPS_LISTED = 30;

export function refKey(r: GraphRef): string {
  return JSON.stringify([r.run, r.tag, r.kind, r.step ?? null]);
}

export function refFromKey(key: string): GraphRef | null {
  try {
    const [run, tag, kind, step] = JSON.parse(key);
    if (typeof run !== "string" || typeof tag !== "string" || typeof kind !== "string") return null;
    return { run, tag, kind: kind as GraphRef["kind"], step: typeof step === "number" ? step : null };
  } catch {
    return null;
  }
}

export function refText(r: GraphRef): string {
  return `${r.run} · ${r.tag} · ${r.kind}${r.step === null ? "" : ` · step ${r.step}`}`;
}

/** Colours B's nodes by their diff status (ghosts: removed); the same nodes get the "unknown" grey. */
export class DiffColorer extends Colorer {
  constructor(private readonly diff: GraphDiff, private readonly byName: Map<string, DiffEntry>, nodes: SceneNode[], dark: boolean) {
    super("diff", nodes, dark);
  }
  fill(n: SceneNode): string | null {
    if (n.name.startsWith(GHOST_PREFIX)) return DIFF_COLOR.removed;
    const e = this.byName.get(n.name);
    return e && e.status !== "removed" && e.status !== "same" ? DIFF_COLOR[e.status] : null;
  }
  legend(): LegendEntry[] {
    const c = this.diff.counts;
    const n = (s: string) => `${c.ops?.[s] ?? 0} ops, ${c.groups?.[s] ?? 0} groups`;
    return [
      { color: DIFF_COLOR.added, label: `added: ${n("added")}` },
      { color: DIFF_COLOR.changed, label: `changed: ${n("changed")}` },
      { color: DIFF_COLOR.removed, label: `removed (ghosts, right): ${n("removed")}` },
      { color: "transparent", label: `vs ${refText(this.diff.base)}` },
    ];
  }
}

export interface CompareHost {
  ref(): GraphRef | null;
  view(): api.ViewOptions;
  dark(): boolean;
  /** the diff (or none) changed: re-decorate the current scene and recolour */
  changed(): void;
  jump(name: string): void;
  showProgress(text: string | null): void;
  showError(message: string): void;
}

export class Compare {
  readonly picker = el("select", { "data-picker": "compare", title: "Compare the graph shown with another graph" });
  readonly panel = el("section", { "data-diff-panel": "" });
  private diff: GraphDiff | null = null;
  private byName = new Map<string, DiffEntry>();
  private target: GraphRef | null = null;
  private token = 0;

  constructor(private readonly host: CompareHost) {
    this.picker.appendChild(option("", "—"));
    this.picker.addEventListener("change", () => void this.setTarget(refFromKey(this.picker.value)));
  }

  /** The toolbar piece: a label and the picker. */
  control(): HTMLElement {
    return el("label", {}, "Compare", this.picker);
  }

  get base(): GraphRef | null {
    return this.target;
  }

  get active(): GraphDiff | null {
    return this.diff;
  }

  /** Every graph of the listing as a choice: each (run, tag, kind), latest and its steps. */
  fill(listing: Listing): void {
    const keep = this.picker.value;
    clear(this.picker);
    this.picker.appendChild(option("", "—"));
    for (const r of listing.runs)
      for (const t of r.tags)
        for (const kind of kindsOf(t)) {
          const refs: GraphRef[] = [{ run: r.run, tag: t.tag, kind, step: null }];
          for (const s of t.steps.slice(-MAX_STEPS_LISTED)) refs.push({ run: r.run, tag: t.tag, kind, step: s.step });
          for (const ref of refs) this.picker.appendChild(option(refKey(ref), refText(ref), refKey(ref) === keep));
        }
  }

  /** Compares the graph shown with `base` (null: stop comparing). */
  async setTarget(base: GraphRef | null): Promise<void> {
    this.target = base;
    const key = base ? refKey(base) : "";
    if (base && ![...this.picker.options].some((o) => o.value === key)) this.picker.appendChild(option(key, refText(base)));
    this.picker.value = key;
    document.body.dataset.compare = key;
    await this.refresh();
  }

  /** Fetches the diff of the graph shown against the target (after the graph shown changed too). */
  async refresh(): Promise<void> {
    const token = ++this.token;
    const ref = this.host.ref();
    this.diff = null;
    this.byName = new Map();
    if (!this.target || !ref) {
      this.render();
      this.host.changed();
      return;
    }
    this.host.showProgress("comparing…");
    try {
      const d = await api.fetchDiff(ref, this.target, () => undefined, this.host.view());
      if (token !== this.token) return;
      this.diff = d;
      for (const e of d.entries) if (e.status !== "removed") this.byName.set(e.name, e);
    } catch (e) {
      if (token !== this.token) return;
      this.host.showError(`Compare failed: ${(e as Error).message}`);
    } finally {
      if (token === this.token) this.host.showProgress(null);
    }
    this.render();
    this.host.changed();
  }

  colorer(nodes: SceneNode[], dark: boolean): Colorer | null {
    return this.diff ? new DiffColorer(this.diff, this.byName, nodes, dark) : null;
  }

  entry(name: string): DiffEntry | undefined {
    if (name.startsWith(GHOST_PREFIX)) return this.removed().find((e) => e.name === name.slice(GHOST_PREFIX.length));
    return this.byName.get(name);
  }

  private removed(): DiffEntry[] {
    return this.diff ? this.diff.entries.filter((e) => e.status === "removed") : [];
  }

  /** The removed nodes drawn as ghosts: those whose parent in A is not removed too (by name). */
  private ghosts(): DiffEntry[] {
    const removed = this.removed();
    const names = new Set(removed.map((e) => e.name));
    const outermost = removed.filter((e) => {
      for (let i = e.name.lastIndexOf("/"); i > 0; i = e.name.lastIndexOf("/", i - 1))
        if (names.has(e.name.slice(0, i))) return false;
      return true;
    });
    return outermost.slice(0, MAX_GHOSTS);
  }

  /** `model` plus the ghost nodes of the removed nodes (a new model), or `model` itself. */
  async decorate(model: SceneModel): Promise<SceneModel> {
    const scene = model.scene;
    const base = scene.nodes.filter((n) => !n.name.startsWith(GHOST_PREFIX));
    const ghosts = this.ghosts();
    if (!ghosts.length && base.length === scene.nodes.length) return model;
    const x0 = scene.width + 60;
    let y = 30;
    let right = scene.width;
    const added: SceneNode[] = ghosts.map((e) => {
      // a removed group is drawn as a collapsed group (never expandable), a removed op as an op
      const group = e.kind === "meta" || e.kind === "series";
      const label = `− ${e.name}`;
      const width = group ? Math.min(320, 24 + 5.8 * label.length) : 15;
      const height = group ? 20 : 6;
      const n: SceneNode = {
        name: GHOST_PREFIX + e.name, label, kind: group ? "meta" : "op", x: x0 + width / 2, y: y + 10, width, height,
        parent: null, expanded: false, cardinality: 1, op: group ? null : "removed", device: null, xla_cluster: null,
        template: null, compute_time_us: null, memory_bytes: null, tpu_compatible: null, extracted: true,
        of: e.anchor, artificial: false, inferred: "",
      };
      y += 28;
      right = Math.max(right, x0 + width + 20 + (group ? 0 : 6 * label.length));
      return n;
    });
    const decorated = { ...scene, nodes: [...base, ...added], width: right, height: Math.max(scene.height, y + 10) };
    return SceneModel.build(decorated, new Slicer(SLICE_MS, () => true));
  }

  /** The side panel: counts and the list of changes, each a link that jumps to its node. */
  private render(): void {
    const box = this.panel;
    clear(box);
    const d = this.diff;
    const body = document.body;
    body.dataset.diffAdded = String(d?.added.length ?? 0);
    body.dataset.diffRemoved = String(d?.removed.length ?? 0);
    body.dataset.diffChanged = String(d?.changed.length ?? 0);
    body.dataset.diffSame = d ? String(d.same) : "";
    if (!d) return;
    box.appendChild(el("h3", { text: `Changes vs ${refText(d.base)}` }));
    const c = d.counts;
    const line = (fam: string) =>
      `${fam}: ${c[fam]?.added ?? 0} added, ${c[fam]?.removed ?? 0} removed, ${c[fam]?.changed ?? 0} changed, ${c[fam]?.same ?? 0} same`;
    box.appendChild(el("div", { className: "gx-muted", "data-diff-counts": "", text: d.same ? "The graphs are the same." : `${line("ops")}; ${line("groups")}` }));
    const ul = el("ul", { className: "gx-list" });
    const mark: Record<string, string> = { added: "+", removed: "−", changed: "~" };
    for (const status of ["added", "removed", "changed"] as DiffStatus[]) {
      const of = d.entries.filter((e) => e.status === status); // sorted by name on the server
      for (const e of of.slice(0, MAX_LISTED_PER_STATUS)) {
        const target = e.status === "removed" ? GHOST_PREFIX + e.name : e.name;
        const link = el("button", { className: "gx-link", text: `${mark[e.status]} ${e.name}`, title: e.name, "data-diff-entry": e.name, "data-diff-status": e.status });
        link.style.color = e.status === "removed" ? "#d93025" : e.status === "added" ? "#188038" : "#b06000";
        link.addEventListener("click", () => this.host.jump(target));
        const extra = e.fields.length ? ` (${e.fields.join(", ")})` : "";
        ul.appendChild(el("li", {}, link, extra ? el("span", { className: "gx-muted", text: extra }) : null));
      }
      if (of.length > MAX_LISTED_PER_STATUS)
        ul.appendChild(el("li", { className: "gx-muted", text: `… ${of.length - MAX_LISTED_PER_STATUS} more ${status}` }));
    }
    box.appendChild(ul);
  }

  /**
   * Under the info pane of `name`: for a changed node its old (A) and new (B) op, device and
   * attrs side by side; for a ghost the removed node's details in A (shown instead of B's).
   */
  async appendInfo(box: HTMLElement, name: string, stillSelected: () => boolean): Promise<void> {
    const e = this.entry(name);
    const ref = this.host.ref();
    if (!e || !this.diff || !ref || e.status === "added") return;
    const base = this.diff.base;
    const sec = el("section", { "data-diff-info": e.status });
    try {
      const view = this.host.view();
      const old = await api.fetchNode(base, e.old_name ?? e.name, view);
      const now = e.status === "removed" ? null : await api.fetchNode(ref, e.name, view);
      if (!stillSelected()) return;
      if (e.status === "removed") clear(box);
      sec.appendChild(el("h3", { text: e.status === "removed" ? `Removed: only in ${refText(base)}` : `Changed (${e.fields.join(", ")})` }));
      if (e.status === "removed") sec.appendChild(el("div", { className: "gx-name", text: e.name, "data-node-name": name }));
      sec.appendChild(sideBySide(old, now));
    } catch (err) {
      if (!stillSelected()) return;
      sec.appendChild(el("div", { className: "gx-error gx-on", text: (err as Error).message }));
    }
    box.appendChild(sec);
    document.body.dataset.diffInfoShown = name;
  }
}

function attrText(d: NodeDetails, key: string): string | null {
  const a = d.attrs.find((x) => x.key === key);
  if (!a) return null;
  if (a.elided_bytes !== undefined) return `… ${a.elided_bytes} bytes`;
  return typeof a.value === "string" ? a.value : JSON.stringify(a.value);
}

/** A table: property | old | new, the rows that differ marked (data-diff-row="changed"). */
function sideBySide(old: NodeDetails, now: NodeDetails | null): HTMLElement {
  const table = el("table", { className: "gx-diff-table" });
  table.appendChild(el("tr", {}, el("th", { text: "" }), el("th", { text: "old" }), el("th", { text: now ? "new" : "" })));
  const rows: [string, string | null, string | null][] = [
    ["name", old.name, now?.name ?? null],
    ["op", old.op, now?.op ?? null],
    ["device", old.device, now?.device ?? null],
  ];
  const keys = [...new Set([...old.attrs.map((a) => a.key), ...(now?.attrs.map((a) => a.key) ?? [])])].sort();
  for (const k of keys) rows.push([k, attrText(old, k), now ? attrText(now, k) : null]);
  for (const [k, a, b] of rows) {
    if (a === null && b === null) continue;
    const differs = now !== null && a !== b;
    table.appendChild(
      el("tr", { "data-diff-row": differs ? "changed" : "same", "data-key": k, className: differs ? "gx-diff-changed" : "" },
        el("td", { text: k }), el("td", { text: a ?? "—" }), el("td", { text: now ? b ?? "—" : "" })),
    );
  }
  return table;
}
