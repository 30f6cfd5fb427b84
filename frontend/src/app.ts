// The Graph Explorer app: state, data flow (listing -> scene -> draw) and interaction.
// The server lays everything out; this file only asks for scenes and draws what it gets.
import * as api from "./api/client";
import { SceneSource } from "./api/scene_source";
import type { GraphKind, GraphRef, Job, Listing, Scene, SearchHit, TagListing } from "./api/types";
import { Colorer, type ColorMode } from "./render/colors";
import { Minimap } from "./render/minimap";
import { SceneModel } from "./render/model";
import { Renderer, type DrawState } from "./render/renderer";
import { Slicer, Superseded } from "./render/slicer";
import { Viewport } from "./render/viewport";
import { clear, el } from "./ui/dom";
import { renderInfo, type InfoActions } from "./ui/info_pane";
import { loadPrefs, savePrefs } from "./ui/prefs";
import { CSS } from "./ui/styles";
import { prefersDark, watchTheme } from "./ui/theme";
import { Toolbar, kindsOf } from "./ui/toolbar";
import { renderWarnings, type UploadNote } from "./ui/warnings";

const UPLOAD_RUN = "__upload__";
type TraceMode = "off" | "inputs" | "outputs" | "both";

export class App {
  private readonly body = document.body;
  private readonly root = el("div", { className: "gx-root" });
  private readonly bar = new Toolbar();
  private readonly progress = el("div", { className: "gx-progress", "data-progress": "" });
  private readonly progressFill = el("div");
  private readonly progressText = el("span", { "data-stage-text": "" });
  private readonly error = el("div", { className: "gx-error", "data-error-box": "", role: "alert" });
  private readonly warnings = el("div", { className: "gx-warn", "data-warnings": "" });
  private readonly stage = el("div", { className: "gx-stage" });
  private readonly canvas = el("canvas", { className: "gx-canvas", "data-canvas": "" });
  private readonly miniCanvas = el("canvas", { className: "gx-minimap", "data-minimap": "" });
  private readonly legend = el("div", { className: "gx-legend", "data-legend": "" });
  private readonly status = el("div", { className: "gx-status" });
  private readonly empty = el("div", { className: "gx-empty" });
  private readonly side = el("div", { className: "gx-side" });
  private readonly searchBox = el("section", { "data-results": "" });
  private readonly infoBox = el("section", { "data-info": "" });
  private readonly hiddenBox = el("section", { "data-hidden-list": "" });
  private readonly ungroupBox = el("section", { "data-ungrouped-list": "" });
  private readonly source = new SceneSource();
  private view: api.ViewOptions = { ...api.DEFAULT_VIEW };

  private readonly renderer = new Renderer(this.canvas);
  private readonly minimap: Minimap;
  private readonly vp = new Viewport();
  private listing: Listing = { runs: [], default: null, version: 1 };
  private ref: GraphRef | null = null;
  private expanded: string[] = [];
  private model: SceneModel | null = null;
  private colorMode: ColorMode = "none";
  private traceMode: TraceMode = "off";
  private st: DrawState = { selected: null, traced: null, tracedEdges: null, hidden: new Set(), hover: null };
  private loadToken = 0;
  private frame = 0;
  private miniDirty = true;
  private miniTimer = 0;
  /** What the server said about each upload (by upload id = tag), shown while it is open. */
  private readonly uploads = new Map<string, UploadNote>();

  constructor() {
    this.minimap = new Minimap(this.miniCanvas, (x, y) => {
      const [w, h] = this.renderer.size();
      this.vp.centerOn(x, y, w, h);
      this.redraw();
    });
  }

  // ---------------------------------------------------------------- setup
  mount(): void {
    const style = document.createElement("style");
    style.textContent = CSS;
    document.head.appendChild(style);
    this.body.style.margin = "0";
    this.progress.append(el("div", { className: "gx-bar" }, this.progressFill), this.progressText);
    this.stage.append(this.canvas, this.status, this.empty, this.legend, this.miniCanvas);
    this.side.append(this.searchBox, this.infoBox, this.hiddenBox, this.ungroupBox);
    this.root.append(this.bar.root, this.progress, this.error, this.warnings, el("div", { className: "gx-main" }, this.stage, this.side));
    this.body.appendChild(this.root);
    this.applyTheme(prefersDark());
    watchTheme((d) => this.applyTheme(d));
    this.wireToolbar();
    this.wireCanvas();
    new ResizeObserver(() => {
      this.renderer.resize();
      this.miniDirty = true;
      this.redraw();
    }).observe(this.stage);
    this.setStatus("loading");
    this.body.dataset.sceneSource = this.source.mode;
    (window as unknown as { graphExplorer: unknown }).graphExplorer = {
      toggle: (name: string) => this.toggleExpand(name),
      /** open exactly these groups (bench/tests: a big scene without clicking through it) */
      setExpanded: (names: string[]) => {
        this.expanded = [...names];
        void this.loadScene(null);
      },
      nodes: () => this.debugNodes(),
      viewport: () => ({ k: this.vp.k, tx: this.vp.tx, ty: this.vp.ty }),
      center: (name: string) => {
        const n = this.model?.node(name);
        if (!n) return false;
        const [w, h] = this.renderer.size();
        this.vp.centerOn(n.x, n.y, w, h);
        this.redraw();
        return true;
      },
    };
    void this.loadListing();
  }

  /** Read-only view for tests and the bench: scene nodes with their on-screen centres. */
  private debugNodes(): object[] {
    const m = this.model;
    if (!m) return [];
    const r = this.canvas.getBoundingClientRect();
    return m.nodes.map((n) => {
      const [sx, sy] = this.vp.toScreen(n.x, n.y);
      return {
        name: n.name, kind: n.kind, op: n.op, expanded: n.expanded, cardinality: n.cardinality,
        parent: n.parent, extracted: n.extracted, x: r.left + sx, y: r.top + sy,
        w: n.width * this.vp.k, h: n.height * this.vp.k,
      };
    });
  }

  private applyTheme(dark: boolean): void {
    this.root.classList.toggle("gx-dark", dark);
    this.body.style.background = dark ? "#202124" : "#fff";
    this.body.dataset.theme = dark ? "dark" : "light";
    this.renderer.setDark(dark);
    this.refreshColors();
  }

  private setStatus(s: "loading" | "ready" | "error" | "empty"): void {
    this.body.dataset.status = s;
  }

  private showError(message: string | null): void {
    this.error.textContent = message ?? "";
    this.error.classList.toggle("gx-on", !!message);
    this.body.dataset.error = message ?? "";
  }

  private showProgress(job: Job | null, text?: string): void {
    this.progress.classList.toggle("gx-on", !!job || !!text);
    if (job) {
      this.progressFill.style.width = `${Math.round(Math.max(0, Math.min(1, job.progress)) * 100)}%`;
      this.progressText.textContent = `${job.stage} ${Math.round(job.progress * 100)}%`;
      this.body.dataset.stage = job.stage;
    } else if (text) {
      this.progressFill.style.width = "15%";
      this.progressText.textContent = text;
    }
  }

  // ---------------------------------------------------------------- pickers
  private async loadListing(): Promise<void> {
    try {
      this.listing = await api.fetchListing();
    } catch (e) {
      this.fail(e);
      return;
    }
    const first = this.pickDefault();
    if (!first) {
      this.setStatus("empty");
      this.empty.textContent = "No graph data in this logdir. Upload a GraphDef (.pbtxt or .pb) or an event file to explore it.";
      this.empty.classList.add("gx-on");
      this.bar.fillRuns(this.listing, "");
      return;
    }
    this.open(first);
  }

  /** The first (run, tag, kind) that holds a graph; op graphs preferred. */
  private pickDefault(): GraphRef | null {
    // the server names the graph it warms up first: open that one
    const d = this.listing.default;
    if (d) return { run: d.run, tag: d.tag, kind: d.kind, step: d.step ?? null };
    for (const pref of ["op", "conceptual", "profile"] as GraphKind[])
      for (const r of this.listing.runs)
        for (const t of r.tags) if (kindsOf(t).includes(pref)) return { run: r.run, tag: t.tag, kind: pref, step: null };
    return null;
  }

  private tagListing(run: string, tag: string): TagListing | undefined {
    return this.listing.runs.find((r) => r.run === run)?.tags.find((t) => t.tag === tag);
  }

  private syncPickers(): void {
    const ref = this.ref;
    if (!ref) return;
    this.bar.fillRuns(this.listing, ref.run);
    const run = this.listing.runs.find((r) => r.run === ref.run);
    this.bar.fillTags(run?.tags ?? [], ref.tag);
    const t = this.tagListing(ref.run, ref.tag);
    this.bar.fillKinds(t ? kindsOf(t) : [ref.kind], ref.kind);
    this.bar.fillSteps(t, ref.step);
  }

  private refFromPickers(changed: "run" | "tag" | "kind" | "step"): GraphRef | null {
    const run = this.bar.run.value;
    const tags = this.listing.runs.find((r) => r.run === run)?.tags ?? [];
    let t = changed === "run" ? undefined : tags.find((x) => x.tag === this.bar.tag.value);
    if (!t) t = tags.find((x) => kindsOf(x).length > 0);
    if (!t) return null;
    const kinds = kindsOf(t);
    let kind = this.bar.kind.value as GraphKind;
    if (changed === "run" || changed === "tag" || !kinds.includes(kind)) kind = kinds[0];
    const step = changed === "step" && this.bar.step.value !== "" ? Number(this.bar.step.value) : null;
    return { run, tag: t.tag, kind, step };
  }

  private wireToolbar(): void {
    const b = this.bar;
    for (const which of ["run", "tag", "kind", "step"] as const) {
      b[which].addEventListener("change", () => {
        const ref = this.refFromPickers(which);
        if (ref) this.open(ref);
      });
    }
    b.file.addEventListener("change", () => void this.uploadFile());
    b.fitBtn.addEventListener("click", () => this.fit());
    b.extract.addEventListener("change", () => {
      this.view = { ...this.view, extract: b.extract.checked };
      this.savePrefs();
      void this.loadScene(null);
    });
    b.color.addEventListener("change", () => {
      this.colorMode = b.color.value as ColorMode;
      this.refreshColors();
    });
    b.trace.addEventListener("change", () => {
      this.traceMode = b.trace.value as TraceMode;
      this.updateTrace();
    });
    const search = () => void this.search();
    b.searchBtn.addEventListener("click", search);
    for (const input of [b.query, b.opQuery])
      input.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter") search();
      });
    window.addEventListener("keydown", (ev) => {
      if (ev.target instanceof HTMLInputElement || ev.target instanceof HTMLSelectElement) return;
      if (ev.key === "f" || ev.key === "F") this.fit();
      if (ev.key === "Escape") this.select(null);
    });
  }

  // ---------------------------------------------------------------- loading
  /** Opens a graph from scratch: restores its removed-node set, fits it on screen. */
  open(ref: GraphRef): void {
    this.ref = ref;
    this.expanded = [];
    this.st.selected = null;
    const prefs = loadPrefs(ref);
    this.st.hidden = prefs.hidden;
    this.view = prefs.view;
    this.bar.extract.checked = prefs.view.extract;
    this.syncPickers();
    clear(this.infoBox);
    clear(this.searchBox);
    this.renderHiddenList();
    this.renderUngroupedList();
    this.empty.classList.remove("gx-on");
    this.setModel(null); // never show the previous graph under the new pickers
    this.source.cancel();
    void this.loadScene(null);
  }

  /**
   * Fetches the scene for the current expansion state. With an anchor (a node name and its
   * screen position before) the viewport is moved so that node stays where it was.
   */
  private async loadScene(anchor: { name: string; sx: number; sy: number } | null, then?: () => void): Promise<boolean> {
    const ref = this.ref;
    if (!ref) return false;
    const token = ++this.loadToken;
    const isCurrent = () => token === this.loadToken;
    this.source.cancel();
    this.setStatus("loading");
    this.showError(null);
    this.showProgress(null, "loading…");
    const t0 = performance.now();
    let scene: Scene;
    let model: SceneModel;
    try {
      const from = this.model && sameGraph(this.model.scene.graph, ref) ? this.model.scene.expanded : null;
      const got = await this.source.load(ref, this.view, this.expanded, from, (job) => isCurrent() && this.showProgress(job), isCurrent);
      if (!isCurrent()) return false;
      scene = got.scene;
      this.body.dataset.sceneVia = got.via;
      this.body.dataset.sceneSource = this.source.mode;
      // index the scene in slices: a 50k-node scene must not freeze the page
      const slicer = new Slicer(12, isCurrent);
      model = await SceneModel.build(scene, slicer);
      this.body.dataset.buildYields = String(slicer.yields);
      this.body.dataset.loadMs = (performance.now() - t0).toFixed(0);
    } catch (e) {
      if (!isCurrent() || e instanceof Superseded) return false;
      this.showProgress(null);
      this.fail(e);
      // keep the last scene on screen and its expansion state as the truth
      if (this.model && sameGraph(this.model.scene.graph, ref)) {
        this.expanded = this.model.scene.expanded;
      }
      return false;
    }
    if (!isCurrent()) return false;
    this.showProgress(null);
    this.expanded = scene.expanded;
    this.body.dataset.expanded = JSON.stringify(scene.expanded);
    timed("gx:setModel", () => this.setModel(model));
    const [w, h] = this.renderer.size();
    const node = anchor ? this.model!.node(anchor.name) : undefined;
    if (anchor && node) {
      this.vp.tx = anchor.sx - node.x * this.vp.k;
      this.vp.ty = anchor.sy - node.y * this.vp.k;
    } else if (!anchor) {
      this.fitInitial(w, h);
    }
    this.setStatus(scene.nodes.length ? "ready" : "empty");
    if (!scene.nodes.length) {
      this.empty.textContent = "This graph is empty.";
      this.empty.classList.add("gx-on");
    }
    if (then) then();
    this.redraw();
    return true;
  }

  private fail(e: unknown): void {
    const msg = e instanceof Error ? e.message : String(e);
    if (msg === "superseded") return;
    this.setStatus("error");
    this.showError(msg);
    this.redraw();
  }

  private setModel(model: SceneModel | null): void {
    this.model = model;
    this.body.dataset.sceneNodes = String(model?.nodes.length ?? 0);
    this.body.dataset.sceneEdges = String(model?.edges.length ?? 0);
    renderWarnings(this.warnings, model, this.uploadNote());
    if (this.st.selected && !model?.node(this.st.selected)) {
      // the selected node is gone (collapsed, ungrouped, other graph): so is its info pane
      this.st.selected = null;
      clear(this.infoBox);
      this.body.dataset.infoName = "";
    }
    this.st.hover = null;
    this.status.textContent = "";
    this.body.dataset.selected = this.st.selected ?? "";
    this.refreshColors();
    this.updateTrace();
  }

  /** The note of the upload being shown, or null when the graph is not an upload. */
  private uploadNote(): UploadNote | null {
    const ref = this.ref;
    return ref && ref.run === UPLOAD_RUN ? this.uploads.get(ref.tag) ?? null : null;
  }

  /** Fit the main (non-extracted) graph so a TF2 trace's tall side column cannot shrink it. */
  private fitInitial(w: number, h: number): void {
    const m = this.model;
    if (!m) return;
    const main = m.nodes.filter((n) => !n.extracted && n.parent === null);
    if (!main.length) return this.fit();
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (const n of main) {
      x0 = Math.min(x0, n.x - n.width / 2); y0 = Math.min(y0, n.y - n.height / 2);
      x1 = Math.max(x1, n.x + n.width / 2); y1 = Math.max(y1, n.y + n.height / 2);
    }
    this.vp.fit({ x0, y0, x1, y1 }, w, h);
    // never open unreadably small: if fitting needs < 0.3x, show the top of the graph at 0.3x
    if (this.vp.k < 0.3) {
      this.vp.k = 0.3;
      this.vp.tx = w / 2 - ((x0 + x1) / 2) * 0.3;
      this.vp.ty = 20 - y0 * 0.3;
    }
  }

  fit(): void {
    if (!this.model) return;
    const [w, h] = this.renderer.size();
    this.vp.fit(this.model.bounds, w, h);
    this.redraw();
  }

  private async uploadFile(): Promise<void> {
    const f = this.bar.file.files?.[0];
    this.bar.file.value = "";
    if (!f) return;
    this.showError(null);
    this.setStatus("loading");
    this.showProgress(null, `uploading ${f.name}…`);
    try {
      const bytes = await f.arrayBuffer();
      const ans = await api.upload(bytes, f.name);
      this.showProgress(null);
      let run = this.listing.runs.find((r) => r.run === UPLOAD_RUN);
      if (!run) this.listing.runs.push((run = { run: UPLOAD_RUN, tags: [] }));
      if (!run.tags.some((t) => t.tag === ans.graph.tag)) {
        const k = ans.graph.kind;
        run.tags.push({ tag: ans.graph.tag, run_graph: k === "op", op_graph: false, conceptual_graph: k === "conceptual", profile: k === "profile", steps: [] });
      }
      this.uploads.set(ans.graph.tag, { filename: f.name, source: ans.source ?? "graph file", warnings: (ans.warnings ?? []).map(String) });
      this.open({ ...ans.graph, step: ans.graph.step ?? null });
    } catch (e) {
      this.showProgress(null);
      this.fail(new Error(`Upload of ${f.name} failed: ${(e as Error).message}`));
    }
  }

  // ---------------------------------------------------------------- colours, trace
  private refreshColors(): void {
    const nodes = this.model?.nodes ?? [];
    this.renderer.colorer = new Colorer(this.colorMode, nodes, this.renderer.dark);
    this.body.dataset.colorMode = this.colorMode;
    const entries = this.renderer.colorer.legend();
    clear(this.legend);
    for (const e of entries) {
      const sw = el("span", { className: e.gradient ? "gx-grad" : "gx-swatch" });
      sw.style.background = e.gradient ? `linear-gradient(to right, ${e.gradient[0]}, ${e.gradient[1]})` : e.color;
      this.legend.appendChild(el("div", {}, sw, el("span", { text: e.label, title: e.label })));
    }
    // edge styles that need explaining: reversed (cycle) edges
    let edgeEntries = 0;
    if (this.model?.edges.some((e) => (e as { reversed?: boolean }).reversed)) {
      const pal = this.renderer.palette;
      const sw = el("span", { className: "gx-edge-swatch" });
      sw.style.borderTop = `2px dashed ${pal.reversedEdge}`;
      this.legend.appendChild(el("div", { "data-legend-edge": "reversed" }, sw, el("span", { text: "edge reversed to break a cycle" })));
      edgeEntries++;
    }
    this.legend.classList.toggle("gx-on", entries.length + edgeEntries > 0);
    this.body.dataset.legendEntries = String(entries.length);
    this.body.dataset.legendEdgeEntries = String(edgeEntries);
    this.miniDirty = true;
    this.redraw();
  }

  /** Marks everything upstream/downstream of the selection over the drawn edges. */
  private updateTrace(): void {
    const m = this.model;
    const sel = this.st.selected;
    this.st.traced = null;
    this.st.tracedEdges = null;
    if (m && sel && this.traceMode !== "off") {
      const start = m.byName.get(sel);
      if (start !== undefined) {
        const nodes = new Set<string>([sel]);
        const edges = new Set<number>();
        const walk = (up: boolean) => {
          const queue = [start];
          const seen = new Set<number>(queue);
          while (queue.length) {
            const i = queue.pop()!;
            for (const ei of up ? m.inEdges[i] : m.outEdges[i]) {
              edges.add(ei);
              const e = m.edges[ei];
              const other = m.byName.get(up ? e.source : e.target);
              if (other === undefined || seen.has(other)) continue;
              seen.add(other);
              nodes.add(m.nodes[other].name);
              queue.push(other);
              const of = m.nodes[other].of;
              const ofi = of ? m.byName.get(of) : undefined;
              if (ofi !== undefined && !seen.has(ofi)) {
                seen.add(ofi);
                nodes.add(of!);
                queue.push(ofi);
              }
            }
          }
        };
        if (this.traceMode === "inputs" || this.traceMode === "both") walk(true);
        if (this.traceMode === "outputs" || this.traceMode === "both") walk(false);
        this.st.traced = nodes;
        this.st.tracedEdges = edges;
      }
    }
    this.body.dataset.traced = String(this.st.traced ? this.st.traced.size - 1 : 0);
    this.redraw();
  }

  // ---------------------------------------------------------------- selection, expand, jump
  private isGroup(name: string): boolean {
    const n = this.model?.node(name);
    // a group holding a single op is still a group: it opens like any other
    return !!n && (n.kind === "meta" || n.kind === "series");
  }

  toggleExpand(name: string): void {
    if (!this.isGroup(name) || !this.model) return;
    const node = this.model.node(name)!;
    const [sx, sy] = this.vp.toScreen(node.x, node.y);
    if (this.expanded.includes(name)) {
      this.expanded = this.expanded.filter((g) => g !== name && !g.startsWith(name + "/"));
    } else {
      this.expanded = [...this.expanded, name];
    }
    void this.loadScene({ name, sx, sy }, () => {
      this.st.selected = name;
      this.body.dataset.selected = name;
      this.updateTrace();
    });
  }

  select(name: string | null): void {
    this.st.selected = name;
    this.body.dataset.selected = name ?? "";
    this.updateTrace();
    if (!name) {
      clear(this.infoBox);
      return;
    }
    void this.showInfo(name);
  }

  private async showInfo(name: string): Promise<void> {
    const ref = this.ref;
    if (!ref) return;
    clear(this.infoBox);
    this.infoBox.appendChild(el("div", { className: "gx-muted", text: `loading ${name}…` }));
    try {
      const d = await api.fetchNode(ref, name, this.view);
      if (this.st.selected !== name) return;
      renderInfo(this.infoBox, d, this.infoActions());
      this.body.dataset.infoName = d.name;
    } catch (e) {
      clear(this.infoBox);
      this.infoBox.appendChild(el("div", { className: "gx-error gx-on", text: (e as Error).message }));
    }
  }

  private infoActions(): InfoActions {
    return {
      jump: (n) => void this.jump(n),
      toggleHidden: (n) => this.toggleHidden(n),
      isHidden: (n) => this.st.hidden.has(n),
      toggleExpand: (n) => this.toggleExpand(n),
      isGroup: (n) => this.isGroup(n),
      isExpanded: (n) => this.expanded.includes(n),
      ungroup: (n) => this.setGrouped(n, false),
      trace: () => {
        this.bar.trace.value = "inputs";
        this.traceMode = "inputs";
        this.updateTrace();
      },
    };
  }

  /**
   * Select a node anywhere: expand the groups holding it (the server's ancestry: names lie
   * about it after scope inference and wide-group splits), then pan to it.
   */
  async jump(name: string, ancestors?: string[]): Promise<void> {
    if (!this.model || !this.ref) return;
    if (!this.model.node(name)) {
      if (!ancestors) {
        const hit = await this.lookup(name);
        if (!hit) {
          this.showError(`Node ${name} is not in this graph.`);
          return;
        }
        name = hit.name;
        ancestors = hit.ancestors;
      }
      const closed = ancestors.filter((g) => !this.expanded.includes(g));
      if (closed.length && !this.model.node(name)) {
        this.expanded = [...this.expanded, ...closed];
        if (!(await this.loadScene(null))) return;
      }
    }
    const m = this.model!;
    // not visible even now (removed, or inside a series shown collapsed): its deepest visible group
    const target = m.node(name) ? name : [...(ancestors ?? [])].reverse().find((g) => m.node(g));
    if (!target) {
      this.showError(`Node ${name} is not in this graph view.`);
      return;
    }
    const n = m.node(target)!;
    const [w, h] = this.renderer.size();
    if (this.vp.k < 0.8) this.vp.k = 1;
    this.vp.centerOn(n.x, n.y, w, h);
    this.select(target);
  }

  /** The server's search hit for exactly this node (an input `x:1` names output 1 of `x`). */
  private async lookup(name: string): Promise<SearchHit | null> {
    const ref = this.ref!;
    for (const candidate of [name, name.replace(/:\d+$/, "")]) {
      try {
        const ans = await api.fetchSearch(ref, `^${escapeRegex(candidate)}$`, "", this.view);
        const hit = ans.hits.find((h) => h.name === candidate);
        if (hit) return hit;
      } catch {
        /* try the next spelling */
      }
    }
    return null;
  }

  private async search(): Promise<void> {
    const ref = this.ref;
    if (!ref) return;
    const q = this.bar.query.value.trim();
    const op = this.bar.opQuery.value.trim();
    clear(this.searchBox);
    this.searchBox.appendChild(el("h3", { text: "Search results" }));
    if (!q && !op) {
      this.searchBox.appendChild(el("div", { className: "gx-muted", text: "Type a name regex or an op type." }));
      return;
    }
    try {
      const ans = await api.fetchSearch(ref, q, op, this.view);
      const ul = el("ul", { className: "gx-list" });
      for (const hit of ans.hits.slice(0, 300)) {
        const link = el("button", { className: "gx-link", text: hit.name, title: hit.name, "data-hit": hit.name });
        link.addEventListener("click", () => void this.jump(hit.name, hit.ancestors));
        ul.appendChild(el("li", {}, link, hit.op ? el("span", { className: "gx-muted", text: ` ${hit.op}` }) : null));
      }
      const total = ans.total ?? ans.hits.length;
      const shown = Math.min(ans.hits.length, 300);
      this.searchBox.appendChild(
        el("div", { className: "gx-muted", text: `${total} match${total === 1 ? "" : "es"}${shown < total ? ` (first ${shown} shown)` : ""}` }),
      );
      this.searchBox.appendChild(ul);
      this.body.dataset.searchHits = String(ans.hits.length);
    } catch (e) {
      this.body.dataset.searchHits = "0";
      this.searchBox.appendChild(el("div", { className: "gx-error gx-on", text: (e as Error).message }));
    }
  }

  // ---------------------------------------------------------------- remove from main graph
  private toggleHidden(name: string): void {
    if (!this.ref) return;
    if (this.st.hidden.has(name)) this.st.hidden.delete(name);
    else this.st.hidden.add(name);
    this.savePrefs();
    this.renderHiddenList();
    if (this.st.selected) void this.showInfo(this.st.selected);
    this.miniDirty = true;
    this.redraw();
  }

  private savePrefs(): void {
    if (this.ref) savePrefs(this.ref, { hidden: this.st.hidden, view: this.view });
  }

  /** Series grouping per SeriesNode: ungrouped series show their members (server `ungroup`). */
  private setGrouped(series: string, grouped: boolean): void {
    if (!this.ref) return;
    const rest = this.view.ungroup.filter((s) => s !== series);
    this.view = { ...this.view, ungroup: grouped ? rest : [...rest, series] };
    // an open group that no longer exists would make the server refuse the scene
    if (!grouped) this.expanded = this.expanded.filter((g) => g !== series && !g.startsWith(series + "/"));
    this.savePrefs();
    this.renderUngroupedList();
    void this.loadScene(null);
  }

  private renderUngroupedList(): void {
    clear(this.ungroupBox);
    this.body.dataset.ungrouped = JSON.stringify(this.view.ungroup);
    if (!this.view.ungroup.length) return;
    this.ungroupBox.appendChild(el("h3", { text: `Ungrouped series (${this.view.ungroup.length})` }));
    const ul = el("ul", { className: "gx-list" });
    for (const name of this.view.ungroup) {
      const again = el("button", { className: "gx-link", text: "regroup", "data-regroup": name });
      again.addEventListener("click", () => this.setGrouped(name, true));
      ul.appendChild(el("li", {}, el("span", { text: `${name} ` }), again));
    }
    this.ungroupBox.appendChild(ul);
  }

  private renderHiddenList(): void {
    clear(this.hiddenBox);
    this.body.dataset.hidden = String(this.st.hidden.size);
    if (!this.st.hidden.size) return;
    this.hiddenBox.appendChild(el("h3", { text: `Removed from main graph (${this.st.hidden.size})` }));
    const ul = el("ul", { className: "gx-list" });
    for (const name of this.st.hidden) {
      const add = el("button", { className: "gx-link", text: "add back", "data-add-back": name });
      add.addEventListener("click", () => this.toggleHidden(name));
      ul.appendChild(el("li", {}, el("span", { text: `${name} ` }), add));
    }
    this.hiddenBox.appendChild(ul);
  }

  // ---------------------------------------------------------------- canvas interaction
  private wireCanvas(): void {
    const c = this.canvas;
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
        this.hoverAt(p.x, p.y);
        return;
      }
      pointers.set(ev.pointerId, p);
      if (pointers.size === 2) {
        const [a, b] = [...pointers.values()];
        const d = Math.hypot(a.x - b.x, a.y - b.y);
        if (pinchDist > 0) this.vp.zoomAt(d / pinchDist, (a.x + b.x) / 2, (a.y + b.y) / 2);
        pinchDist = d;
        this.redraw();
        return;
      }
      if (downAt && !moved && Math.hypot(p.x - downAt.x, p.y - downAt.y) > 3) {
        moved = true;
        c.classList.add("gx-panning");
      }
      if (moved) {
        this.vp.pan(p.x - prev.x, p.y - prev.y);
        this.redraw();
      }
    });
    const up = (ev: PointerEvent) => {
      pointers.delete(ev.pointerId);
      c.classList.remove("gx-panning");
      if (pointers.size === 0 && downAt && !moved && ev.type === "pointerup") this.clickAt(downAt.x, downAt.y);
      if (pointers.size === 0) downAt = null;
    };
    c.addEventListener("pointerup", up);
    c.addEventListener("pointercancel", up);
    c.addEventListener("dblclick", (ev) => {
      const p = local(ev);
      const i = this.hitAt(p.x, p.y);
      if (i >= 0) this.toggleExpand(this.model!.nodes[i].name);
    });
    c.addEventListener(
      "wheel",
      (ev) => {
        ev.preventDefault();
        const p = local(ev);
        const unit = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 400 : 1;
        const speed = ev.ctrlKey ? 0.01 : 0.0015; // ctrlKey: trackpad pinch
        this.vp.zoomAt(Math.exp(-ev.deltaY * unit * speed), p.x, p.y);
        this.redraw();
      },
      { passive: false },
    );
  }

  private hitAt(sx: number, sy: number): number {
    if (!this.model) return -1;
    const [wx, wy] = this.vp.toWorld(sx, sy);
    const hidden = this.st.hidden;
    return this.model.hit(wx, wy, hidden.size ? (i) => hidden.has(this.model!.nodes[i].name) : undefined);
  }

  private clickAt(sx: number, sy: number): void {
    const i = this.hitAt(sx, sy);
    if (i < 0) {
      this.select(null);
      return;
    }
    const n = this.model!.nodes[i];
    // the +/- control of a group toggles it
    if (this.isGroup(n.name)) {
      const [wx, wy] = this.vp.toWorld(sx, sy);
      const x0 = n.x - n.width / 2, y0 = n.y - n.height / 2;
      const onToggle = n.expanded
        ? Math.hypot(wx - (x0 + 7), wy - (y0 + 7)) <= 5.5
        : n.height * this.vp.k >= 12 && Math.hypot(wx - (x0 + 5), wy - n.y) <= 4.5;
      if (onToggle) {
        this.toggleExpand(n.name);
        return;
      }
    }
    this.select(n.name);
  }

  private hoverAt(sx: number, sy: number): void {
    const i = this.hitAt(sx, sy);
    const name = i >= 0 ? this.model!.nodes[i].name : null;
    if (name !== this.st.hover) {
      this.st.hover = name;
      this.status.textContent = name ?? "";
      this.canvas.title = name ?? "";
      this.redraw();
    }
  }

  // ---------------------------------------------------------------- drawing
  redraw(): void {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      const t0 = performance.now();
      this.renderer.resize();
      const stats = timed("gx:draw", () => this.renderer.draw(this.model, this.vp, this.st));
      if (this.miniDirty && !this.miniTimer) {
        // rebuilt in its own task after the frame, so a big scene's first paint is not delayed
        this.miniTimer = window.setTimeout(() => {
          this.miniTimer = 0;
          this.miniDirty = false;
          const col = this.renderer.colorer;
          const pal = this.renderer.palette;
          timed("gx:minimap", () => this.minimap.rebuild(this.model, pal, (i) => {
            const n = this.model!.nodes[i];
            if (this.st.hidden.has(n.name)) return pal.background;
            return col?.fill(n) ?? (n.kind === "op" ? pal.opStroke : pal.metaFill);
          }));
          const [mw, mh] = this.renderer.size();
          this.minimap.draw(this.vp, mw, mh, this.renderer.palette);
        }, 0);
      }
      const [w, h] = this.renderer.size();
      this.minimap.draw(this.vp, w, h, this.renderer.palette);
      const d = this.body.dataset;
      d.drawnNodes = String(stats.nodes);
      d.drawnEdges = String(stats.edges);
      d.drawnLabels = String(stats.labels);
      d.drawMs = stats.ms.toFixed(1);
      d.drawEdgeMs = stats.edgeMs.toFixed(1);
      d.maxDrawMs = Math.max(Number(d.maxDrawMs ?? 0), performance.now() - t0).toFixed(1);
      d.scale = this.vp.k.toFixed(4);
      d.frames = String(Number(d.frames ?? 0) + 1);
    });
  }
}

function sameGraph(a: GraphRef, b: GraphRef): boolean {
  return a.run === b.run && a.tag === b.tag && a.kind === b.kind && (a.step ?? null) === (b.step ?? null);
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Runs fn; leaves a performance measure (visible to benches and devtools) when it took > 16 ms. */
function timed<T>(name: string, fn: () => T): T {
  const t0 = performance.now();
  const out = fn();
  if (performance.now() - t0 > 16) performance.measure(name, { start: t0, end: performance.now() });
  return out;
}
