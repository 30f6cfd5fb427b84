// Per-node data (colour mode "node_data"): the side panel that picks how a node-data tag colours
// the graph (aggregation, scale, thresholds), steps through it with a slider, lists the top
// nodes (click: jump) and the names that matched no node; the value and its history in the info
// pane. The server aggregates (/node_data); a step change fetches the values of the nodes shown
// and swaps the colorer: a redraw, never a new layout. Text only (textContent).
import * as api from "../api/client";
import type { GraphRef, NodeDataAgg, NodeDataAnswer, NodeDataTag, SceneNode } from "../api/types";
import type { Colorer } from "../render/colors";
import { fmtValue, NAN_COLOR, NodeDataColorer, type NodeDataScale, type NodeDataSettings } from "../render/node_data_colors";
import { clear, el, option } from "../ui/dom";
import { COST_RUN, costLabel, fmtCost } from "./cost";

export interface NodeDataHost {
  ref(): GraphRef | null;
  view(): api.ViewOptions;
  expanded(): string[];
  jump(name: string): void;
  /** new values (or settings) arrived: recolour */
  changed(): void;
  showError(message: string): void;
}

/** The colour select's value (and the deep link's `color`) naming a node-data tag: `nd:["run","tag"]`. */
export const NODE_DATA_PREFIX = "nd:";
const PREFIX = NODE_DATA_PREFIX;

/** `[run, tag]` or `[run, tag, step]` of a value in the form `NodeDataPanel.choice` / `linkChoice`
 * write, else null. */
function parseChoice(value: string): [string, string, number | null] | null {
  if (!value.startsWith(PREFIX)) return null;
  try {
    const v: unknown = JSON.parse(value.slice(PREFIX.length));
    if (!Array.isArray(v) || typeof v[0] !== "string" || typeof v[1] !== "string") return null;
    if (v.length === 2) return [v[0], v[1], null];
    if (v.length === 3 && Number.isSafeInteger(v[2])) return [v[0], v[1], v[2] as number];
  } catch {
    /* not JSON: not a choice */
  }
  return null;
}

/** True when `value` names a node-data tag (and maybe a step) as the colour select or a link does. */
export function isNodeDataChoice(value: string): boolean {
  return parseChoice(value) !== null;
}

export class NodeDataPanel {
  readonly panel = el("section", { "data-node-data": "", className: "gx-nd" });
  private readonly controls = el("div", { "data-nd": "controls" });
  private readonly aggSel = el("select", { "data-nd": "agg", title: "How a group's value is made from the values inside it" });
  private readonly scaleSel = el("select", { "data-nd": "scale", title: "Colour scale" });
  private readonly thresholdsIn = el("input", { "data-nd": "thresholds", placeholder: "thresholds, e.g. 0.1, 1, 10", title: "Upper bounds, ascending (thresholds scale)" });
  private readonly slider = el("input", { type: "range", min: "0", max: "0", step: "1", "data-nd": "step", title: "Step" });
  private readonly stepText = el("span", { "data-nd": "step-text", className: "gx-muted" });
  private readonly topBox = el("div", { "data-nd": "top" });
  private readonly unmatchedBox = el("div", { "data-nd": "unmatched" });
  private readonly file = el("input", { type: "file", accept: ".json", className: "gx-hidden-file", "data-nd": "file" });
  private tags: NodeDataTag[] = [];
  private filledFor: string | null = null; // the run the colour options were labelled for
  private current: { run: string; tag: string } | null = null;
  private answer: NodeDataAnswer | null = null;
  private step: number | null = null;
  private seq = 0;
  private readonly settings = new Map<string, NodeDataSettings>(); // per tag
  private readonly seeded = new Set<string>(); // tags whose first answer chose their scale
  private info: { box: HTMLElement; name: string; still: () => boolean } | null = null; // the info pane shown

  constructor(private readonly host: NodeDataHost, private readonly colorSelect: HTMLSelectElement) {
    for (const a of ["max", "mean", "sum"]) this.aggSel.appendChild(option(a, `group: ${a}`));
    for (const [id, label] of [["sequential", "sequential"], ["diverging", "diverging"], ["thresholds", "thresholds"]]) {
      this.scaleSel.appendChild(option(id, label));
    }
    const load = el("button", { text: "Load node data JSON…", "data-nd": "load", title: "Model Explorer's node-data JSON" });
    load.addEventListener("click", () => this.file.click());
    this.file.addEventListener("change", () => void this.uploadFile());
    this.aggSel.addEventListener("change", () => void this.fetch());
    this.scaleSel.addEventListener("change", () => this.settingsChanged());
    this.thresholdsIn.addEventListener("change", () => this.settingsChanged());
    this.slider.addEventListener("input", () => {
      const a = this.answer;
      if (!a) return;
      this.step = a.steps[Number(this.slider.value)] ?? null;
      this.stepText.textContent = `step ${this.step}`;
      void this.fetch();
    });
    // the controls show while a tag colours the graph; loading a file is always offered
    this.controls.append(
      el("div", { className: "gx-actions" }, this.aggSel, this.scaleSel),
      el("div", { className: "gx-actions" }, this.thresholdsIn),
      el("div", { className: "gx-nd-step" }, this.slider, this.stepText),
      this.topBox, this.unmatchedBox,
    );
    this.controls.hidden = true;
    this.panel.append(el("h3", { text: "Node data" }), this.controls, el("div", { className: "gx-actions" }, load, this.file));
    (window as unknown as { graphExplorerNodeData: unknown }).graphExplorerNodeData = {
      fill: (name: string) => (this.answer ? this.colorerFor([], false)?.fill({ name } as SceneNode) ?? null : null),
      answer: () => this.answer,
    };
  }

  get active(): boolean {
    return this.current !== null;
  }

  /** Lists the node-data tags as colour modes ("Node data: tag"), keeping the current choice. */
  async loadTags(): Promise<void> {
    try {
      this.tags = (await api.fetchNodeDataTags()).tags;
    } catch (e) {
      this.host.showError(`node data tags: ${(e as Error).message}`);
      return;
    }
    this.fillColorSelect();
  }

  private fillColorSelect(): void {
    for (const o of [...this.colorSelect.options]) if (o.value.startsWith(PREFIX)) o.remove();
    const ref = this.host.ref();
    this.filledFor = ref?.run ?? null;
    // the graph's own run first, then the others
    const sorted = [...this.tags].sort((a, b) => Number(b.run === ref?.run) - Number(a.run === ref?.run));
    for (const t of sorted) {
      const label = t.run === COST_RUN ? costLabel(t.tag) : t.source.startsWith("upload ") ? `Node data: ${t.source.slice(7)}`
        : t.run === ref?.run ? `Node data: ${t.tag}` : `Node data: ${t.run}/${t.tag}`;
      this.colorSelect.appendChild(option(PREFIX + JSON.stringify([t.run, t.tag]), label));
    }
    if (this.current) this.colorSelect.value = PREFIX + JSON.stringify([this.current.run, this.current.tag]);
  }

  /** The colour select's value when it names a tag: pick it (true), else drop node data (false). */
  choose(value: string): boolean {
    if (!value.startsWith(PREFIX)) {
      this.current = null;
      this.answer = null;
      this.controls.hidden = true;
      document.body.dataset.nodeDataTag = "";
      return false;
    }
    const parsed = parseChoice(value);
    if (!parsed) return false;
    const [run, tag, step] = parsed;
    this.current = { run, tag };
    this.step = step; // a link's step, else the latest
    this.answer = null;
    this.controls.hidden = false;
    const cost = run === COST_RUN; // a built-in cost: one step, groups summed
    if (cost) this.aggSel.value = "sum";
    this.aggSel.disabled = cost;
    (this.slider.parentElement as HTMLElement).style.display = cost ? "none" : "";
    this.unmatchedBox.style.display = cost ? "none" : ""; // every op of the graph: nothing to match
    const s = this.settingsOf();
    this.scaleSel.value = s.scale;
    this.thresholdsIn.value = s.thresholds.join(", ");
    document.body.dataset.nodeDataTag = tag;
    void this.fetch();
    return true;
  }

  /** The tag colouring the graph as the colour select's value, if any. */
  choice(): string | null {
    return this.current ? PREFIX + JSON.stringify([this.current.run, this.current.tag]) : null;
  }

  /** The same for the deep link: with the step when one was picked on the slider (else the latest). */
  linkChoice(): string | null {
    if (!this.current) return null;
    const { run, tag } = this.current;
    return PREFIX + JSON.stringify(this.step === null ? [run, tag] : [run, tag, this.step]);
  }

  /** The scene changed (expand, collapse, another graph): fetch the values of what it shows. */
  sceneChanged(): void {
    // the graph's own run's tags come first and are named by tag alone: relabel for another run
    if (this.tags.length && (this.host.ref()?.run ?? null) !== this.filledFor) this.fillColorSelect();
    if (this.current) void this.fetch();
  }

  colorer(nodes: SceneNode[], dark: boolean): Colorer | null {
    return this.colorerFor(nodes, dark);
  }

  private colorerFor(nodes: SceneNode[], dark: boolean): NodeDataColorer | null {
    return this.answer && this.current ? new NodeDataColorer(this.answer, this.settingsOf(), nodes, dark, this.label()) : null;
  }

  /** What the current tag is called: its tag, or an upload's file name. */
  private label(): string {
    const cur = this.current;
    const t = cur && this.tags.find((x) => x.run === cur.run && x.tag === cur.tag);
    if (cur?.run === COST_RUN) return costLabel(cur.tag);
    return t ? (t.source.startsWith("upload ") ? t.source.slice(7) : t.tag) : cur?.tag ?? "";
  }

  private settingsOf(): NodeDataSettings {
    const key = this.current ? JSON.stringify([this.current.run, this.current.tag]) : "";
    let s = this.settings.get(key);
    if (!s) {
      const cur = this.current;
      s = { scale: "sequential", thresholds: [] };
      if (cur?.run === COST_RUN) Object.assign(s, { log: true, fmt: (v: number) => fmtCost(cur.tag, v) });
      this.settings.set(key, s);
    }
    return s;
  }

  /** A tag that carries its own colours (its writer's thresholds: ``node_data(..., thresholds=)``,
   * a Model Explorer JSON's, add_compiled_graph's one colour per graph and kernel) opens on the
   * thresholds scale, once per tag; the user's choice is kept after that. */
  private seedScale(cur: { run: string; tag: string }, a: NodeDataAnswer): void {
    const key = JSON.stringify([cur.run, cur.tag]);
    if (this.seeded.has(key)) return;
    this.seeded.add(key);
    const s = this.settingsOf();
    if (a.thresholds.length && !s.thresholds.length && s.scale === "sequential") {
      s.scale = "thresholds";
      this.scaleSel.value = "thresholds";
    }
  }

  private settingsChanged(): void {
    const s = this.settingsOf();
    s.scale = this.scaleSel.value as NodeDataScale;
    s.thresholds = this.thresholdsIn.value.split(/[,\s]+/).filter(Boolean).map(Number).filter((v) => Number.isFinite(v));
    this.host.changed();
  }

  private async fetch(): Promise<void> {
    const ref = this.host.ref();
    const cur = this.current;
    if (!ref || !cur) return;
    const seq = ++this.seq;
    document.body.dataset.nodeDataState = "loading";
    try {
      const a = await api.fetchNodeData(ref, this.host.view(), this.host.expanded(), {
        run: cur.run, tag: cur.tag, step: this.step, agg: this.aggSel.value as NodeDataAgg, node: null,
      }, () => seq === this.seq);
      if (seq !== this.seq) return;
      this.answer = a;
      this.seedScale(cur, a);
      this.render(a);
      this.host.changed();
      document.body.dataset.nodeDataState = "ready";
      document.body.dataset.nodeDataStep = String(a.step);
      const info = this.info;
      if (info && info.still()) void this.appendInfo(info.box, info.name, info.still);
    } catch (e) {
      if (seq !== this.seq || (e as Error).message === "superseded") return;
      document.body.dataset.nodeDataState = "error";
      this.host.showError(`node data ${cur.tag}: ${(e as Error).message}`);
    }
  }

  private render(a: NodeDataAnswer): void {
    this.slider.max = String(Math.max(0, a.steps.length - 1));
    this.slider.value = String(Math.max(0, a.steps.indexOf(a.step)));
    this.slider.disabled = a.steps.length < 2;
    this.stepText.textContent = `step ${a.step} (${a.steps.length} step${a.steps.length === 1 ? "" : "s"})`;
    clear(this.topBox);
    this.topBox.appendChild(el("h3", { text: `Top ${a.top.length}` }));
    const ul = el("ul", { className: "gx-list", "data-nd-top": "" });
    for (const t of a.top) {
      const link = el("button", { className: "gx-link", text: t.name, title: t.name, "data-jump": t.name });
      link.addEventListener("click", () => this.host.jump(t.name));
      const val = el("span", { className: "gx-muted", text: ` ${this.fmt(t.value, t.nonfinite)}` });
      if (t.nonfinite === "nan") val.style.color = NAN_COLOR;
      ul.appendChild(el("li", {}, link, val));
    }
    this.topBox.appendChild(ul);
    clear(this.unmatchedBox);
    this.unmatchedBox.appendChild(el("div", {
      className: a.unmatched ? "" : "gx-muted", "data-nd-unmatched": String(a.unmatched),
      text: `${a.matched} name${a.matched === 1 ? "" : "s"} matched; ${a.unmatched} matched no node`,
    }));
    if (a.unmatched) {
      const details = el("details", {}, el("summary", { text: "names that matched no node" }));
      const list = el("ul", { className: "gx-list" });
      for (const n of a.unmatched_names) list.appendChild(el("li", { text: n, title: n }));
      if (a.unmatched > a.unmatched_names.length) list.appendChild(el("li", { className: "gx-muted", text: `… ${a.unmatched - a.unmatched_names.length} more` }));
      details.appendChild(list);
      this.unmatchedBox.appendChild(details);
    }
  }

  /** The info pane's part: the node's value at this step and its history as a small plot. */
  async appendInfo(box: HTMLElement, name: string, still: () => boolean): Promise<void> {
    this.info = { box, name, still };
    const ref = this.host.ref();
    const cur = this.current;
    const a0 = this.answer;
    if (!ref || !cur || !a0) return;
    let a: NodeDataAnswer;
    try {
      a = await api.fetchNodeData(ref, this.host.view(), this.host.expanded(), {
        run: cur.run, tag: cur.tag, step: a0.step, agg: this.aggSel.value as NodeDataAgg, node: name,
      });
    } catch (e) {
      if (still()) box.appendChild(el("div", { className: "gx-error gx-on", text: (e as Error).message }));
      return;
    }
    if (!still()) return;
    for (const old of box.querySelectorAll("[data-nd-info]")) old.remove();
    const here = a.history.find((p) => p.step === a.step);
    const sec = el("section", { "data-nd-info": name });
    sec.appendChild(el("h3", { text: `${this.label()} (${a.agg})` }));
    sec.appendChild(el("div", { "data-nd-value": here ? this.fmt(here.value, here.nonfinite) : "", text: here
      ? `${a.data_run === COST_RUN ? "" : `step ${a.step}: `}${this.fmt(here.value, here.nonfinite)}` : `no value at step ${a.step}` }));
    if (a.history.length > 1 || (a.history.length && a.data_run !== COST_RUN)) sec.appendChild(sparkline(a, name));
    box.appendChild(sec);
  }

  /** A value as the current tag writes it (a cost in its unit). */
  private fmt(v: number | null, nonfinite?: string): string {
    const f = this.settingsOf().fmt;
    return f && v !== null ? f(v) : fmtValue(v, nonfinite);
  }

  private async uploadFile(): Promise<void> {
    const f = this.file.files?.[0];
    this.file.value = "";
    if (!f) return;
    try {
      const added = await api.uploadNodeData(await f.arrayBuffer(), f.name);
      this.tags = [...this.tags.filter((t) => !added.tags.some((n) => n.tag === t.tag && n.run === t.run)), ...added.tags];
      this.fillColorSelect();
      const first = added.tags[0];
      if (first) {
        this.colorSelect.value = PREFIX + JSON.stringify([first.run, first.tag]);
        this.colorSelect.dispatchEvent(new Event("change"));
      }
    } catch (e) {
      this.host.showError(`Upload of ${f.name} failed: ${(e as Error).message}`);
    }
  }
}

/** The node's value over the steps (canvas, 260×60): a line, NaN steps as marks, this step dotted. */
function sparkline(a: NodeDataAnswer, name: string): HTMLCanvasElement {
  const w = 260;
  const h = 60;
  const c = el("canvas", { "data-nd-history": String(a.history.length), title: `${name}: ${a.data_tag} over steps` });
  const dpr = window.devicePixelRatio || 1;
  c.width = w * dpr;
  c.height = h * dpr;
  c.style.width = `${w}px`;
  c.style.height = `${h}px`;
  const ctx = c.getContext("2d");
  if (!ctx) return c;
  ctx.scale(dpr, dpr);
  const pts = a.history;
  const finite = pts.filter((p) => p.value !== null).map((p) => p.value as number);
  const lo = finite.length ? Math.min(...finite) : 0;
  const hi = finite.length ? Math.max(...finite) : 1;
  const s0 = pts[0].step;
  const s1 = pts[pts.length - 1].step;
  const x = (s: number) => 4 + (s1 > s0 ? ((s - s0) / (s1 - s0)) * (w - 8) : (w - 8) / 2);
  const y = (v: number) => h - 12 - (hi > lo ? ((v - lo) / (hi - lo)) * (h - 20) : (h - 20) / 2);
  ctx.strokeStyle = "#1a73e8";
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  let pen = false;
  for (const p of pts) {
    if (p.value === null) {
      pen = false;
      continue;
    }
    if (pen) ctx.lineTo(x(p.step), y(p.value));
    else ctx.moveTo(x(p.step), y(p.value));
    pen = true;
  }
  ctx.stroke();
  for (const p of pts) {
    if (p.value !== null) continue;
    ctx.fillStyle = p.nonfinite === "nan" ? NAN_COLOR : "#311b92";
    ctx.fillRect(x(p.step) - 2, 2, 4, h - 14);
  }
  ctx.fillStyle = "#f57c00";
  const cur = pts.find((p) => p.step === a.step);
  if (cur) ctx.fillRect(x(cur.step) - 1, 0, 2, h - 10);
  ctx.fillStyle = "#5f6368";
  ctx.font = "10px sans-serif";
  ctx.fillText(`${fmtValue(lo)} – ${fmtValue(hi)}  steps ${s0}–${s1}`, 4, h - 1);
  return c;
}
