// The Graph Explorer app: its state and the wiring of the data flow listing -> scene -> draw.
// The server lays everything out; the app only asks for scenes and draws what it gets. The
// pieces live in app/: page skeleton (shell), the graph view (app/graph_view.ts: canvas,
// viewport, scene loading, frame loop), the second graph side by side (split_pane.ts, a second
// graph view), bookmarks, pickers, navigation (fit, search, jump), info pane, trace, legend, side
// lists, test hooks.
import * as api from "./api/client";
import type { GraphRef, Listing } from "./api/types";
import { BookmarkMenu } from "./app/bookmarks";
import { Compare, GHOST_PREFIX, refKey } from "./app/compare";
import type { LinkState } from "./app/deep_link";
import { exportView } from "./app/export_view";
import { Keyboard } from "./app/keyboard";
import { LinkBar } from "./app/link_bar";
import { applyRestore, type Restore, resolveLink } from "./app/restore";
import { showInfo } from "./app/info";
import { markOnce } from "./marks";
import { renderLegend } from "./app/legend";
import { GraphView } from "./app/graph_view";
import { jump, type NavHost } from "./app/navigation";
import { NodeDataPanel } from "./app/node_data";
import { pickDefault, refFromPickers, syncPickers } from "./app/pickers";
import { SearchBox } from "./app/search";
import { Shell } from "./app/shell";
import { SplitPane } from "./app/split_pane";
import { renderHiddenList, renderUngroupedList } from "./app/side_lists";
import { installPaneHooks, installTestHooks } from "./app/test_hooks";
import { traceFrom, type TraceMode } from "./app/trace";
import { Uploads } from "./app/upload";
import { Colorer, type ColorMode } from "./render/colors";
import type { SceneModel } from "./render/model";
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
  /** the main graph view: its canvas, viewport, scene and selection */
  private readonly main: GraphView = new GraphView(this.ui.canvas, this.ui.miniCanvas, {
    ui: this.ui,
    data: document.body.dataset,
    decorate: (model) => this.compare.decorate(model),
    modelSet: (model) => this.modelSet(model),
    select: (n) => this.select(n),
    toggleExpand: (n) => this.toggleExpand(n),
    hover: (name) => {
      if (name === this.st.hover) return;
      this.st.hover = name;
      this.ui.status.textContent = name ?? "";
      this.ui.canvas.title = name ?? "";
      this.redraw();
    },
    fail: (e) => this.fail(e),
    redrawn: () => {
      if (!this.restoring) this.link.save();
    },
  });
  private readonly renderer = this.main.renderer;
  private readonly vp = this.main.vp;
  private readonly st = this.main.st;
  private listing: Listing = { runs: [], default: null, data_location: "", version: 1 };
  private colorMode: ColorMode = "none";
  private traceMode: TraceMode = "off";
  private readonly uploads = new Uploads();
  private readonly link: LinkBar = new LinkBar(() => this.linkState());
  private readonly keys: Keyboard = new Keyboard({
    model: () => this.model,
    selected: () => this.st.selected,
    select: (name) => this.select(name),
    isGroup: (name) => this.main.isGroup(name),
    isExpanded: (name) => this.expanded.includes(name),
    toggleExpand: (name) => this.toggleExpand(name),
    fit: () => this.fit(),
    focusSearch: () => this.ui.bar.query.focus(),
    reveal: (name) => this.main.reveal(name),
    center: () => this.main.center(),
  }, this.ui.canvas);
  private restoring = true; // until a deep link is applied, the URL is not rewritten
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
      return this.main.loadScene(null);
    },
    select: (name) => this.select(name),
    showError: (message) => this.ui.showError(message),
  };

  private readonly search = new SearchBox(this.nav, this.ui.bar, this.ui.searchBox);
  private readonly nodeData = new NodeDataPanel({
    ref: () => this.ref,
    view: () => this.view,
    expanded: () => this.expanded,
    jump: (name) => void jump(this.nav, name),
    changed: () => this.refreshColors(),
    showError: (message) => this.ui.showError(message),
  }, this.ui.bar.color);
  /** the second graph, side by side (app/split_pane.ts) */
  private readonly split: SplitPane = new SplitPane({
    compare: this.compare,
    mainRef: () => this.ref,
    mainModel: () => this.model,
    mainSelected: () => this.st.selected,
    colorMode: () => this.colorMode,
    dark: () => this.renderer.dark,
    selectInMain: (name) => void jump(this.nav, name),
    changed: () => this.redraw(),
  });
  /** named views kept per logdir (app/bookmarks.ts) */
  private readonly bookmarks = new BookmarkMenu({
    location: () => this.listing.data_location ?? "",
    current: () => this.linkState(),
    open: (link) => this.openLink(link),
  });

  // ---------------------------------------------------------------- setup
  mount(): void {
    const ui = this.ui;
    ui.mount();
    this.applyTheme(prefersDark());
    watchTheme((d) => this.applyTheme(d));
    this.wireToolbar();
    ui.bar.root.appendChild(this.compare.control());
    ui.infoBox.after(this.compare.panel); // the info pane first: a long list of changes must not push it down
    ui.searchBox.after(this.nodeData.panel);
    const svgBtn = el("button", { text: "SVG", "data-action": "download-svg", title: "Download the view as SVG" });
    const pngBtn = el("button", { text: "PNG", "data-action": "download-png", title: "Download the view as PNG" });
    svgBtn.addEventListener("click", () => this.export("svg"));
    pngBtn.addEventListener("click", () => this.export("png"));
    ui.bar.root.append(this.split.button, this.bookmarks.button, this.link.button, svgBtn, pngBtn, this.keys.helpBtn);
    ui.stage.append(this.keys.help, this.keys.live, this.bookmarks.menu);
    this.split.mount(ui.stage);
    ui.warnings.after(this.link.warning);
    this.main.attach(ui.stage);
    ui.setStatus("loading");
    this.body.dataset.sceneSource = this.main.loader.source.mode;
    installTestHooks({
      vp: this.vp,
      canvas: ui.canvas,
      model: () => this.model,
      screen: () => this.renderer.size(),
      toggle: (name) => this.toggleExpand(name),
      setExpanded: (names) => {
        this.expanded = names;
        void this.main.loadScene(null);
      },
      redraw: () => this.redraw(),
      drawList: () => ({ labels: this.renderer.lastLabels, nodes: this.renderer.lastNodes, path: this.renderer.path,
        tiles: this.renderer.lastTiles }),
    });
    const pane = this.split.view;
    this.keys.addPane(this.split.keyHost(() => this.ui.bar.query.focus()), pane.canvas, () => this.split.isShown());
    installPaneHooks("split", { vp: pane.vp, canvas: pane.canvas, model: () => pane.model,
      screen: () => pane.renderer.size(), redraw: () => pane.redraw() });
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
      void this.main.loadScene(null);
    });
    b.color.addEventListener("change", () => {
      this.colorMode = this.nodeData.choose(b.color.value) ? "node_data" : b.color.value as ColorMode;
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
      void this.nodeData.loadTags();
      this.split.fill();
      this.bookmarks.load();
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
      firstView: () => this.main.loadScene(null, undefined, true),
      loadExpanded: async (groups) => {
        this.expanded = groups;
        return (await this.main.loadScene(null, undefined, false, true)) ? null : this.main.lastLoadError;
      },
      compare: async (ref) => {
        if (ref || this.compare.base) await this.compare.setTarget(ref);
      },
      split: async (ref) => {
        if (ref) await this.split.open(ref);
        else this.split.close();
      },
      modes: (color, trace, nodeData) => {
        if (color) this.ui.bar.color.value = this.colorMode = color;
        if (nodeData && this.nodeData.choose(nodeData)) {
          this.colorMode = "node_data";
          // its option comes with the tags if they are not listed yet
          this.ui.bar.color.value = this.nodeData.choice() ?? "none";
        }
        if (trace) this.ui.bar.trace.value = this.traceMode = trace;
        this.refreshColors();
      },
      shown: (name) => !!this.model?.node(name),
      exists: async (name) => !!this.ref && (await this.link.nodeExists(this.ref, this.view, name)),
      select: (name) => {
        this.select(name);
        this.main.reveal(name);
      },
      jump: (name) => jump(this.nav, name),
      view: (v) => this.main.showView(v),
      warn: (lines) => this.link.warn(lines),
    });
    this.updateTrace();
    this.restoring = false;
    this.body.dataset.restored = "true";
    this.redraw();
  }

  private linkState(): LinkState | null {
    const split = this.split.ref;
    const color = this.colorMode === "node_data" ? this.nodeData.linkChoice() ?? "none" : this.colorMode;
    return this.link.state(this.ref, this.expanded, this.st.selected, color, this.traceMode,
      this.compare.base ? refKey(this.compare.base) : null, split ? refKey(split) : null, this.main.viewLinkText());
  }

  /** Opens a saved view (a bookmark): the deep link's way, its colours and trace exactly as saved. */
  private openLink(link: LinkState): void {
    const restore = resolveLink(this.listing, link, pickDefault(this.listing));
    if (!restore) return;
    this.restoring = true;
    this.ui.bar.color.value = this.colorMode = "none";
    this.nodeData.choose("none");
    this.ui.bar.trace.value = this.traceMode = "off";
    void this.restore(restore);
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
    this.main.setModel(null); // never show the previous graph under the new pickers
    this.main.loader.cancel();
    if (!noFirstView) void this.main.loadScene(null, undefined, true);
    if (this.compare.base) void this.compare.refresh();
  }

  private fail(e: unknown): void {
    const msg = e instanceof Error ? e.message : String(e);
    if (msg === "superseded") return;
    this.ui.setStatus("error");
    this.ui.showError(msg);
    this.redraw();
  }

  /** The main view's scene changed: warnings, the selection if it is gone, colours, trace. */
  private modelSet(model: SceneModel | null): void {
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
    if (model) this.nodeData.sceneChanged(); // the values of what this scene shows
  }

  private async uploadFile(): Promise<void> {
    try {
      const ref = await this.uploads.fromInput(this.ui, this.listing);
      this.compare.fill(this.listing); // an upload can be compared with, or compared
      this.split.fill();
      if (ref) this.open(ref);
    } catch (e) {
      this.fail(e);
    }
  }

  /** Downloads the view (open groups, colours, selection) as SVG or PNG: app/export_view.ts. */
  private export(format: "svg" | "png"): void {
    if (this.model) exportView(format, this.model, this.renderer.colorer, this.renderer.palette, this.st, (m) => this.ui.showError(m));
  }

  fit(): void {
    this.main.fit();
  }

  // ---------------------------------------------------------------- colours, trace
  private refreshColors(): void {
    const nodes = this.model?.nodes ?? [];
    this.renderer.colorer = (this.colorMode === "diff" && this.compare.colorer(nodes, this.renderer.dark))
      || (this.colorMode === "node_data" && this.nodeData.colorer(nodes, this.renderer.dark))
      || new Colorer(this.colorMode, nodes, this.renderer.dark);
    this.body.dataset.colorMode = this.colorMode;
    renderLegend(this.ui.legend, this.renderer.colorer, this.model, this.renderer.palette);
    this.main.minimapDirty();
    this.split.refreshColors();
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
  toggleExpand(name: string): void {
    if (name.startsWith(GHOST_PREFIX)) return;
    this.main.toggle(name, () => {
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
    this.split.follow(name); // its match in the second pane
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
    void showInfo(box, this.ref, this.view, name, still, this.infoActions())
      .then(() => this.compare.appendInfo(box, name, still))
      .then(() => this.nodeData.appendInfo(box, name, still));
  }

  /** A diff arrived or was dropped: ghosts in or out of the scene, the diff colours on or off. */
  private async diffChanged(): Promise<void> {
    const on = !!this.compare.active;
    if (on !== (this.colorMode === "diff")) {
      this.colorMode = on ? "diff" : "none";
      this.ui.bar.color.value = this.colorMode;
      this.nodeData.choose(this.colorMode); // a node-data colouring gives way (its controls hide)
    }
    if (this.model) {
      const model = await this.compare.decorate(this.model);
      if (model !== this.model) this.main.setModel(model);
    }
    this.split.diffChanged();
    this.refreshColors();
  }

  private infoActions(): InfoActions {
    return {
      jump: (n) => void jump(this.nav, n),
      toggleHidden: (n) => this.toggleHidden(n),
      isHidden: (n) => this.st.hidden.has(n),
      toggleExpand: (n) => this.toggleExpand(n),
      isGroup: (n) => this.main.isGroup(n),
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
    this.main.minimapDirty();
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
    void this.main.loadScene(null);
  }

  private savePrefs(): void {
    if (this.ref) savePrefs(this.ref, { hidden: this.st.hidden, view: this.view });
  }

  private renderSideLists(): void {
    renderHiddenList(this.ui.hiddenBox, this.st.hidden, (n) => this.toggleHidden(n));
    renderUngroupedList(this.ui.ungroupBox, this.view.ungroup, (n) => this.setGrouped(n, true));
  }

  redraw(): void {
    this.main.redraw();
  }

  // the main view's graph, choices and scene
  private get ref(): GraphRef | null {
    return this.main.ref;
  }
  private set ref(ref: GraphRef | null) {
    this.main.ref = ref;
  }
  private get view(): api.ViewOptions {
    return this.main.view;
  }
  private set view(view: api.ViewOptions) {
    this.main.view = view;
  }
  private get expanded(): string[] {
    return this.main.expanded;
  }
  private set expanded(groups: string[]) {
    this.main.expanded = groups;
  }
  private get model(): SceneModel | null {
    return this.main.model;
  }
}
