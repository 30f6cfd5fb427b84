// The Graph Explorer app: its state and the wiring of the data flow listing -> scene -> draw.
// The server lays everything out; the app only asks for scenes and draws what it gets. The
// pieces live in app/: page skeleton (shell), pickers, canvas input, navigation (fit, search,
// jump), scene loader, info pane, trace, legend, side lists, frame loop, test hooks.
import * as api from "./api/client";
import type { GraphRef, Listing } from "./api/types";
import { wireCanvas } from "./app/canvas_input";
import { Compare, GHOST_PREFIX, refKey } from "./app/compare";
import type { LinkState } from "./app/deep_link";
import { downloadPng, downloadSvg, embeddedFontCss, sceneToSvg } from "./app/export_view";
import { Keyboard } from "./app/keyboard";
import { LinkBar } from "./app/link_bar";
import { applyRestore, type Restore, resolveLink } from "./app/restore";
import { FrameLoop, timed } from "./app/frame_loop";
import { showInfo } from "./app/info";
import { markOnce } from "./marks";
import { renderLegend } from "./app/legend";
import { fitMain, jump, type NavHost } from "./app/navigation";
import { pickDefault, refFromPickers, syncPickers } from "./app/pickers";
import { SceneLoader, sameGraph } from "./app/scene_loader";
import { SearchBox } from "./app/search";
import { Shell } from "./app/shell";
import { renderHiddenList, renderUngroupedList } from "./app/side_lists";
import { installTestHooks } from "./app/test_hooks";
import { traceFrom, type TraceMode } from "./app/trace";
import { Uploads } from "./app/upload";
import { Colorer, type ColorMode } from "./render/colors";
import { Minimap } from "./render/minimap";
import type { SceneModel } from "./render/model";
import { Renderer, type DrawState } from "./render/renderer";
import { Viewport } from "./render/viewport";
import { clear, el } from "./ui/dom";
import type { InfoActions } from "./ui/info_pane";
import { loadPrefs, savePrefs } from "./ui/prefs";
import { prefersDark, watchTheme } from "./ui/theme";
import { renderWarnings } from "./ui/warnings";

export class App {
  /** asked for first, before the page skeleton is built: the whole first load waits for it */
  private readonly listingAnswer = api.fetchListing();
  private readonly ui = new Shell();
  private readonly body = this.ui.body;
  private readonly loader = new SceneLoader(this.ui);
  private readonly renderer = new Renderer(this.ui.canvas);
  private readonly vp = new Viewport();
  private readonly minimap = new Minimap(this.ui.miniCanvas, (x, y) => {
    const [w, h] = this.renderer.size();
    this.vp.centerOn(x, y, w, h);
    this.redraw();
  });
  private readonly loop = new FrameLoop(this.renderer, this.minimap, this.vp, () => this.st, () => this.model);
  private view: api.ViewOptions = { ...api.DEFAULT_VIEW };
  private listing: Listing = { runs: [], default: null, version: 1 };
  private ref: GraphRef | null = null;
  private expanded: string[] = [];
  private model: SceneModel | null = null;
  private colorMode: ColorMode = "none";
  private traceMode: TraceMode = "off";
  private readonly st: DrawState = { selected: null, traced: null, tracedEdges: null, hidden: new Set(), hover: null };
  private readonly uploads = new Uploads();
  private readonly link: LinkBar = new LinkBar(() => this.linkState());
  private readonly keys: Keyboard = new Keyboard({
    model: () => this.model,
    selected: () => this.st.selected,
    select: (name) => this.select(name),
    isGroup: (name) => this.isGroup(name),
    isExpanded: (name) => this.expanded.includes(name),
    toggleExpand: (name) => this.toggleExpand(name),
    fit: () => this.fit(),
    focusSearch: () => this.ui.bar.query.focus(),
    reveal: (name) => this.reveal(name),
    center: () => {
      const [w, h] = this.renderer.size();
      return this.vp.toWorld(w / 2, h / 2);
    },
  }, this.ui.canvas);
  private restoring = true; // until a deep link is applied, the URL is not rewritten
  private lastLoadError = "";
  private readonly compare = new Compare({
    ref: () => this.ref,
    view: () => this.view,
    dark: () => this.renderer.dark,
    changed: () => void this.diffChanged(),
    jump: (name) => void jump(this.nav, name),
    showProgress: (text) => this.ui.showProgress(null, text ?? undefined),
    showError: (message) => this.ui.showError(message),
  });
  private readonly nav: NavHost = {
    vp: this.vp,
    ref: () => this.ref,
    view: () => this.view,
    model: () => this.model,
    screen: () => this.renderer.size(),
    expanded: () => this.expanded,
    expand: (groups) => {
      this.expanded = [...this.expanded, ...groups];
      return this.loadScene(null);
    },
    select: (name) => this.select(name),
    showError: (message) => this.ui.showError(message),
  };

  private readonly search = new SearchBox(this.nav, this.ui.bar, this.ui.searchBox);

  // ---------------------------------------------------------------- setup
  mount(): void {
    const ui = this.ui;
    ui.mount();
    this.applyTheme(prefersDark());
    watchTheme((d) => this.applyTheme(d));
    this.wireToolbar();
    ui.bar.root.appendChild(this.compare.control());
    ui.infoBox.after(this.compare.panel); // the info pane first: a long list of changes must not push it down
    const svgBtn = el("button", { text: "SVG", "data-action": "download-svg", title: "Download the view as SVG" });
    const pngBtn = el("button", { text: "PNG", "data-action": "download-png", title: "Download the view as PNG" });
    svgBtn.addEventListener("click", () => this.export("svg"));
    pngBtn.addEventListener("click", () => this.export("png"));
    ui.bar.root.append(this.link.button, svgBtn, pngBtn, this.keys.helpBtn);
    ui.stage.append(this.keys.help, this.keys.live);
    ui.warnings.after(this.link.warning);
    wireCanvas(ui.canvas, {
      vp: this.vp,
      model: () => this.model,
      hidden: () => this.st.hidden,
      isGroup: (n) => this.isGroup(n),
      select: (n) => this.select(n),
      toggleExpand: (n) => this.toggleExpand(n),
      hover: (name) => {
        if (name === this.st.hover) return;
        this.st.hover = name;
        ui.status.textContent = name ?? "";
        ui.canvas.title = name ?? "";
        this.redraw();
      },
      redraw: () => this.redraw(),
    });
    new ResizeObserver(() => {
      this.renderer.resize();
      this.loop.minimapDirty();
      this.redraw();
    }).observe(ui.stage);
    ui.setStatus("loading");
    this.body.dataset.sceneSource = this.loader.source.mode;
    installTestHooks({
      vp: this.vp,
      canvas: ui.canvas,
      model: () => this.model,
      screen: () => this.renderer.size(),
      toggle: (name) => this.toggleExpand(name),
      setExpanded: (names) => {
        this.expanded = names;
        void this.loadScene(null);
      },
      redraw: () => this.redraw(),
      drawList: () => ({ labels: this.renderer.lastLabels, nodes: this.renderer.lastNodes, path: this.renderer.path,
        tiles: this.renderer.lastTiles }),
    });
    ui.showProgress(null, "listing runs…"); // (the canvas shows the page background meanwhile)
    void this.loadListing();
  }

  private applyTheme(dark: boolean): void {
    this.ui.setTheme(dark);
    this.renderer.setDark(dark);
    this.refreshColors();
  }

  private wireToolbar(): void {
    const b = this.ui.bar;
    for (const which of ["run", "tag", "kind", "step"] as const) {
      b[which].addEventListener("change", () => {
        const ref = refFromPickers(b, this.listing, which);
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
    this.search.attach(); // app/search.ts
    // keys: app/keyboard.ts
  }

  // ---------------------------------------------------------------- loading
  private async loadListing(): Promise<void> {
    try {
      this.listing = await this.listingAnswer;
      this.ui.showProgress(null);
      markOnce("listing");
      this.compare.fill(this.listing);
    } catch (e) {
      this.ui.showProgress(null);
      this.fail(e);
      return;
    }
    const first = pickDefault(this.listing);
    const restore = resolveLink(this.listing, await this.link.read(), first);
    if (restore) {
      void this.restore(restore);
      return;
    }
    this.restoring = false;
    if (!first) {
      this.ui.setStatus("empty");
      this.ui.showEmpty("No graph data in this logdir. Upload a GraphDef (.pbtxt or .pb), a PyTorch graph (.pt2, .onnx) or an event file to explore it.");
      this.ui.bar.fillRuns(this.listing, "");
      return;
    }
    this.open(first);
  }

  /** Opens the view a deep link names (app/restore.ts: applyRestore), then keeps the URL in step. */
  private async restore(r: Restore): Promise<void> {
    await applyRestore(r, {
      open: (ref) => this.open(ref, true),
      firstView: () => this.loadScene(null, undefined, true),
      loadExpanded: async (groups) => {
        this.expanded = groups;
        return (await this.loadScene(null, undefined, false, true)) ? null : this.lastLoadError;
      },
      compare: (ref) => this.compare.setTarget(ref),
      modes: (color, trace) => {
        if (color) this.ui.bar.color.value = this.colorMode = color;
        if (trace) this.ui.bar.trace.value = this.traceMode = trace;
        this.refreshColors();
      },
      shown: (name) => !!this.model?.node(name),
      exists: async (name) => !!this.ref && (await this.link.nodeExists(this.ref, this.view, name)),
      select: (name) => {
        this.select(name);
        this.reveal(name);
      },
      jump: (name) => jump(this.nav, name),
      warn: (lines) => this.link.warn(lines),
    });
    this.updateTrace();
    this.restoring = false;
    this.body.dataset.restored = "true";
    this.redraw();
  }

  private linkState(): LinkState | null {
    return this.link.state(this.ref, this.expanded, this.st.selected, this.colorMode, this.traceMode,
      this.compare.base ? refKey(this.compare.base) : null);
  }

  /** Opens a graph from scratch: restores its removed-node set, fits it on screen. */
  open(ref: GraphRef, noFirstView = false): void {
    this.ref = ref;
    this.expanded = [];
    this.st.selected = null;
    const prefs = loadPrefs(ref);
    this.st.hidden = prefs.hidden;
    this.view = prefs.view;
    this.ui.bar.extract.checked = prefs.view.extract;
    syncPickers(this.ui.bar, this.listing, ref);
    clear(this.ui.infoBox);
    this.search.reset();
    this.renderSideLists();
    this.ui.showEmpty(null);
    this.setModel(null); // never show the previous graph under the new pickers
    this.loader.cancel();
    if (!noFirstView) void this.loadScene(null, undefined, true);
    if (this.compare.base) void this.compare.refresh();
  }

  /**
   * Fetches the scene for the current expansion state. With an anchor (a node name and its
   * screen position before) the viewport is moved so that node stays where it was.
   */
  private async loadScene(anchor: { name: string; sx: number; sy: number } | null, then?: () => void,
                          firstView = false, quiet = false): Promise<boolean> {
    const ref = this.ref;
    if (!ref) return false;
    let model: SceneModel | null;
    try {
      const view = firstView ? { ...this.view, firstView: true } : this.view;
      model = await this.loader.load(ref, view, this.expanded, this.model);
    } catch (e) {
      this.lastLoadError = e instanceof Error ? e.message : String(e);
      if (quiet) return false; // the caller decides (a deep link's group that is gone)
      this.fail(e);
      // keep the last scene on screen and its expansion state as the truth
      if (this.model && sameGraph(this.model.scene.graph, ref)) this.expanded = this.model.scene.expanded;
      return false;
    }
    if (!model) return false; // superseded by a newer load
    model = await this.compare.decorate(model); // ghosts of the nodes removed, when comparing
    const scene = model.scene;
    this.expanded = scene.expanded;
    this.body.dataset.expanded = JSON.stringify(scene.expanded);
    timed("gx:setModel", () => this.setModel(model));
    const [w, h] = this.renderer.size();
    const node = anchor ? model.node(anchor.name) : undefined;
    if (anchor && node) {
      this.vp.tx = anchor.sx - node.x * this.vp.k;
      this.vp.ty = anchor.sy - node.y * this.vp.k;
    } else if (!anchor) {
      fitMain(this.vp, model, w, h);
    }
    this.ui.setStatus(scene.nodes.length ? "ready" : "empty");
    if (!scene.nodes.length) this.ui.showEmpty("This graph is empty.");
    if (then) then();
    this.redraw();
    return true;
  }

  private fail(e: unknown): void {
    const msg = e instanceof Error ? e.message : String(e);
    if (msg === "superseded") return;
    this.ui.setStatus("error");
    this.ui.showError(msg);
    this.redraw();
  }

  private setModel(model: SceneModel | null): void {
    this.model = model;
    this.body.dataset.sceneNodes = String(model?.nodes.length ?? 0);
    this.body.dataset.sceneEdges = String(model?.edges.length ?? 0);
    renderWarnings(this.ui.warnings, model, this.uploads.noteFor(this.ref));
    if (this.st.selected && !model?.node(this.st.selected)) {
      // the selected node is gone (collapsed, ungrouped, other graph): so is its info pane
      this.st.selected = null;
      clear(this.ui.infoBox);
      this.body.dataset.infoName = "";
    }
    this.st.hover = null;
    this.ui.status.textContent = "";
    this.body.dataset.selected = this.st.selected ?? "";
    this.refreshColors();
    this.updateTrace();
  }

  private async uploadFile(): Promise<void> {
    try {
      const ref = await this.uploads.fromInput(this.ui, this.listing);
      this.compare.fill(this.listing); // an upload can be compared with, or compared
      if (ref) this.open(ref);
    } catch (e) {
      this.fail(e);
    }
  }

  /** Downloads the view (open groups, colours, selection) as SVG or PNG: app/export_view.ts. */
  private export(format: "svg" | "png"): void {
    const model = this.model;
    if (!model) return;
    embeddedFontCss()
      .catch((e) => {
        this.ui.showError(`${(e as Error).message}: exported without its font`);
        return "";
      })
      .then((font) => {
        const svg = sceneToSvg(model, this.renderer.colorer, this.renderer.palette, this.st, font);
        if (format === "svg") downloadSvg(model, svg);
        else return downloadPng(model, svg);
      })
      .catch((e) => this.ui.showError(`PNG export failed: ${(e as Error).message}`));
  }

  /** Pans (keeping the zoom) so the node is on screen when it is not. */
  private reveal(name: string): void {
    const n = this.model?.node(name);
    if (!n) return;
    const [w, h] = this.renderer.size();
    const [sx, sy] = this.vp.toScreen(n.x, n.y);
    if (sx < 40 || sy < 40 || sx > w - 40 || sy > h - 40) this.vp.centerOn(n.x, n.y, w, h);
    this.redraw();
  }

  fit(): void {
    if (!this.model) return;
    const [w, h] = this.renderer.size();
    this.vp.fit(this.model.bounds, w, h);
    this.redraw();
  }

  // ---------------------------------------------------------------- colours, trace
  private refreshColors(): void {
    const nodes = this.model?.nodes ?? [];
    this.renderer.colorer = (this.colorMode === "diff" && this.compare.colorer(nodes, this.renderer.dark))
      || new Colorer(this.colorMode, nodes, this.renderer.dark);
    this.body.dataset.colorMode = this.colorMode;
    renderLegend(this.ui.legend, this.renderer.colorer, this.model, this.renderer.palette);
    this.loop.minimapDirty();
    this.redraw();
  }

  /** Marks everything upstream/downstream of the selection over the drawn edges. */
  private updateTrace(): void {
    const t = traceFrom(this.model, this.st.selected, this.traceMode);
    this.st.traced = t?.nodes ?? null;
    this.st.tracedEdges = t?.edges ?? null;
    this.body.dataset.traced = String(t ? t.nodes.size - 1 : 0);
    this.redraw();
  }

  // ---------------------------------------------------------------- selection, expand, info
  private isGroup(name: string): boolean {
    const n = this.model?.node(name);
    // a group holding a single op is still a group: it opens like any other
    return !!n && (n.kind === "meta" || n.kind === "series");
  }

  toggleExpand(name: string): void {
    if (!this.isGroup(name) || !this.model || name.startsWith(GHOST_PREFIX)) return;
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
      this.keys.announce(name);
      this.updateTrace();
    });
  }

  select(name: string | null): void {
    this.st.selected = name;
    this.body.dataset.selected = name ?? "";
    this.keys.announce(name);
    this.updateTrace();
    if (!name) {
      clear(this.ui.infoBox);
      return;
    }
    this.showInfo(name);
  }

  private showInfo(name: string): void {
    if (!this.ref) return;
    const still = () => this.st.selected === name;
    const box = this.ui.infoBox;
    if (name.startsWith(GHOST_PREFIX)) {
      clear(box); // a removed node: only the base graph has it
      void this.compare.appendInfo(box, name, still);
      return;
    }
    void showInfo(box, this.ref, this.view, name, still, this.infoActions()).then(() => this.compare.appendInfo(box, name, still));
  }

  /** A diff arrived or was dropped: ghosts in or out of the scene, the diff colours on or off. */
  private async diffChanged(): Promise<void> {
    const on = !!this.compare.active;
    if (on !== (this.colorMode === "diff")) {
      this.colorMode = on ? "diff" : "none";
      this.ui.bar.color.value = this.colorMode;
    }
    if (this.model) {
      const model = await this.compare.decorate(this.model);
      if (model !== this.model) this.setModel(model);
    }
    this.refreshColors();
  }

  private infoActions(): InfoActions {
    return {
      jump: (n) => void jump(this.nav, n),
      toggleHidden: (n) => this.toggleHidden(n),
      isHidden: (n) => this.st.hidden.has(n),
      toggleExpand: (n) => this.toggleExpand(n),
      isGroup: (n) => this.isGroup(n),
      isExpanded: (n) => this.expanded.includes(n),
      ungroup: (n) => this.setGrouped(n, false),
      trace: () => {
        this.ui.bar.trace.value = "inputs";
        this.traceMode = "inputs";
        this.updateTrace();
      },
    };
  }

  // ---------------------------------------------------------------- per-graph choices
  /** "Remove from main graph" / "add back", persisted per graph. */
  private toggleHidden(name: string): void {
    if (!this.ref) return;
    if (this.st.hidden.has(name)) this.st.hidden.delete(name);
    else this.st.hidden.add(name);
    this.savePrefs();
    this.renderSideLists();
    if (this.st.selected) this.showInfo(this.st.selected);
    this.loop.minimapDirty();
    this.redraw();
  }

  /** Series grouping per SeriesNode: ungrouped series show their members (server `ungroup`). */
  private setGrouped(series: string, grouped: boolean): void {
    if (!this.ref) return;
    const rest = this.view.ungroup.filter((s) => s !== series);
    this.view = { ...this.view, ungroup: grouped ? rest : [...rest, series] };
    // an open group that no longer exists would make the server refuse the scene
    if (!grouped) this.expanded = this.expanded.filter((g) => g !== series && !g.startsWith(series + "/"));
    this.savePrefs();
    this.renderSideLists();
    void this.loadScene(null);
  }

  private savePrefs(): void {
    if (this.ref) savePrefs(this.ref, { hidden: this.st.hidden, view: this.view });
  }

  private renderSideLists(): void {
    renderHiddenList(this.ui.hiddenBox, this.st.hidden, (n) => this.toggleHidden(n));
    renderUngroupedList(this.ui.ungroupBox, this.view.ungroup, (n) => this.setGrouped(n, true));
  }

  redraw(): void {
    this.loop.redraw();
    if (!this.restoring) this.link.save();
  }
}
