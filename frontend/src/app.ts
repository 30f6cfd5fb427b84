// The Graph Explorer app: the wiring of the data flow listing -> scene -> draw. The server lays
// everything out; the app only asks for scenes and draws what it gets. This module builds the
// parts and connects their hosts; the parts live in app/: page skeleton (shell), the graph view
// (graph_view.ts: canvas, viewport, scene loading, frame loop), which graph is shown and how it
// came to be (session.ts: listing, deep link, bookmark, upload), the selection and info pane
// (selection.ts), colour and trace modes (color_trace.ts), per-graph choices and side lists
// (graph_choices.ts), the second graph side by side (split_pane.ts, a second graph view),
// compare, node data, bookmarks, pickers, navigation (fit, search, jump), keys, test hooks.
import * as api from "./api/client";
import { BookmarkMenu } from "./app/bookmarks";
import { ColorTrace } from "./app/color_trace";
import { Compare } from "./app/compare";
import { exportView } from "./app/export_view";
import { GraphChoices } from "./app/graph_choices";
import { GraphView } from "./app/graph_view";
import { Keyboard } from "./app/keyboard";
import { legendCorner } from "./app/legend";
import { LinkBar } from "./app/link_bar";
import { jump, type NavHost } from "./app/navigation";
import { hoverText, otherEnd } from "./app/stub_links";
import { NodeDataPanel } from "./app/node_data";
import { refFromPickers } from "./app/pickers";
import { SearchBox } from "./app/search";
import { NodeSelection } from "./app/selection";
import { Session } from "./app/session";
import { Shell } from "./app/shell";
import { SplitPane } from "./app/split_pane";
import { installPaneHooks, installTestHooks } from "./app/test_hooks";
import { Uploads } from "./app/upload";
import type { SceneModel } from "./render/model";
import { clear, el } from "./ui/dom";
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
    select: (n) => {
      const far = otherEnd(this.main.model, n); // a stub or bridge: go to the node it stands for
      if (far !== null) void jump(this.nav, far);
      else this.selection.select(n);
    },
    toggleExpand: (n) => this.selection.toggleExpand(n),
    hover: (name) => {
      if (name === this.st.hover) return;
      this.st.hover = name;
      const text = hoverText(this.main.model, name);
      this.ui.status.textContent = text.split("\n").slice(0, 2).join(": ");
      this.ui.canvas.title = text;
      this.main.redraw();
    },
    fail: (e) => this.fail(e),
    redrawn: () => {
      if (!this.session.restoring) this.link.save();
    },
    corner: () => legendCorner(this.ui.legend),
  });
  private readonly renderer = this.main.renderer;
  private readonly st = this.main.st;
  private readonly uploads = new Uploads();
  private readonly link: LinkBar = new LinkBar(() => this.session.linkState());
  private readonly keys: Keyboard = new Keyboard({
    model: () => this.main.model,
    selected: () => this.st.selected,
    select: (name) => this.selection.select(name),
    isGroup: (name) => this.main.isGroup(name),
    isExpanded: (name) => this.main.expanded.includes(name),
    toggleExpand: (name) => this.selection.toggleExpand(name),
    fit: () => this.main.fit(),
    focusSearch: () => this.ui.bar.query.focus(),
    reveal: (name) => this.main.reveal(name),
    center: () => this.main.center(),
  }, this.ui.canvas);
  private readonly compare = new Compare({
    ref: () => this.main.ref,
    view: () => this.main.view,
    dark: () => this.renderer.dark,
    changed: () => void this.colors.diffChanged(),
    jump: (name) => void jump(this.nav, name),
    showProgress: (text) => this.ui.showProgress(null, text ?? undefined),
    showError: (message) => this.ui.showError(message),
  });
  private readonly nav: NavHost = {
    vp: this.main.vp,
    ref: () => this.main.ref,
    view: () => this.main.view,
    model: () => this.main.model,
    screen: () => this.renderer.size(),
    expanded: () => this.main.expanded,
    expand: (groups) => {
      this.main.expanded = [...this.main.expanded, ...groups];
      return this.main.loadScene(null);
    },
    select: (name) => this.selection.select(name),
    showError: (message) => this.ui.showError(message),
  };

  private readonly search = new SearchBox(this.nav, this.ui.bar, this.ui.searchBox, (names) => {
    this.main.st.matched = names; // a pattern search's matches, outlined (and said so in the legend)
    document.body.dataset.patternMarked = String(names?.size ?? 0);
    this.colors.refreshColors();
  });
  private readonly nodeData = new NodeDataPanel({
    ref: () => this.main.ref,
    view: () => this.main.view,
    expanded: () => this.main.expanded,
    jump: (name) => void jump(this.nav, name),
    changed: () => this.colors.refreshColors(),
    showError: (message) => this.ui.showError(message),
  }, this.ui.bar.color);
  /** the second graph, side by side (app/split_pane.ts) */
  private readonly split: SplitPane = new SplitPane({
    compare: this.compare,
    mainRef: () => this.main.ref,
    mainModel: () => this.main.model,
    mainSelected: () => this.st.selected,
    colorMode: () => this.colors.colorMode,
    dark: () => this.renderer.dark,
    selectInMain: (name) => void jump(this.nav, name),
    changed: () => this.main.redraw(),
  });
  /** named views kept per logdir (app/bookmarks.ts) */
  private readonly bookmarks = new BookmarkMenu({
    location: () => this.session.listing.data_location ?? "",
    current: () => this.session.linkState(),
    open: (link) => this.session.openLink(link),
  });
  /** removed nodes, ungrouped series, extract: per graph (app/graph_choices.ts) */
  private readonly choices = new GraphChoices({
    main: this.main,
    hiddenBox: this.ui.hiddenBox,
    ungroupBox: this.ui.ungroupBox,
    extract: this.ui.bar.extract,
    kernels: this.ui.bar.kernels,
    hiddenChanged: () => {
      if (this.st.selected) this.selection.showInfo(this.st.selected);
    },
  });
  /** the colour and trace modes (app/color_trace.ts) */
  private readonly colors = new ColorTrace({
    main: this.main,
    bar: this.ui.bar,
    legend: this.ui.legend,
    data: this.body.dataset,
    compare: this.compare,
    nodeData: this.nodeData,
    colorsChanged: () => this.split.refreshColors(),
    diffChanged: () => this.split.diffChanged(),
  });
  /** the selection and its info pane (app/selection.ts) */
  private readonly selection: NodeSelection = new NodeSelection({
    main: this.main,
    infoBox: this.ui.infoBox,
    data: this.body.dataset,
    compare: this.compare,
    nodeData: this.nodeData,
    announce: (name) => this.keys.announce(name),
    updateTrace: () => this.colors.updateTrace(),
    follow: (name) => this.split.follow(name),
    jump: (name) => void jump(this.nav, name),
    toggleHidden: (name) => this.choices.toggleHidden(name),
    ungroup: (series) => this.choices.setGrouped(series, false),
    traceInputs: () => this.colors.traceInputs(),
  });
  /** which graph is shown, from the listing, a deep link, a bookmark, the pickers, an upload (app/session.ts) */
  private readonly session: Session = new Session(this.listingAnswer, {
    ui: this.ui,
    main: this.main,
    link: this.link,
    uploads: this.uploads,
    compare: this.compare,
    split: this.split,
    colors: this.colors,
    choices: this.choices,
    listed: (listing) => {
      this.compare.fill(listing);
      void this.nodeData.loadTags();
      this.split.fill();
      this.bookmarks.load();
    },
    opening: () => this.search.reset(),
    select: (name) => this.selection.select(name),
    jump: (name) => jump(this.nav, name),
    fail: (e) => this.fail(e),
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
      vp: this.main.vp,
      canvas: ui.canvas,
      model: () => this.main.model,
      screen: () => this.renderer.size(),
      toggle: (name) => this.selection.toggleExpand(name),
      setExpanded: (names) => {
        this.main.expanded = names;
        void this.main.loadScene(null);
      },
      redraw: () => this.main.redraw(),
      drawList: () => ({ labels: this.renderer.lastLabels, nodes: this.renderer.lastNodes, path: this.renderer.path,
        tiles: this.renderer.lastTiles }),
    });
    const pane = this.split.view;
    this.keys.addPane(this.split.keyHost(() => this.ui.bar.query.focus()), pane.canvas, () => this.split.isShown());
    installPaneHooks("split", { vp: pane.vp, canvas: pane.canvas, model: () => pane.model,
      screen: () => pane.renderer.size(), redraw: () => pane.redraw() });
    ui.showProgress(null, "listing runs…"); // (the canvas shows the page background meanwhile)
    void this.session.start();
  }

  private applyTheme(dark: boolean): void {
    this.ui.setTheme(dark);
    this.renderer.setDark(dark);
    this.colors.refreshColors();
  }

  private wireToolbar(): void {
    const b = this.ui.bar;
    for (const which of ["run", "tag", "kind", "step"] as const) {
      b[which].addEventListener("change", () => {
        const ref = refFromPickers(b, this.session.listing, which);
        if (ref) this.session.open(ref);
      });
    }
    b.file.addEventListener("change", () => void this.session.uploadFile());
    b.fitBtn.addEventListener("click", () => this.main.fit());
    b.extract.addEventListener("change", () => this.choices.setExtract(b.extract.checked));
    b.kernels.addEventListener("change", () => this.choices.setKernels(b.kernels.checked));
    b.color.addEventListener("change", () => this.colors.chooseColor());
    b.trace.addEventListener("change", () => this.colors.chooseTrace());
    this.search.attach(); // app/search.ts
    // keys: app/keyboard.ts
  }

  /** Downloads the view (open groups, colours, selection) as SVG or PNG: app/export_view.ts. */
  private export(format: "svg" | "png"): void {
    const model = this.main.model;
    if (model) exportView(format, model, this.renderer.colorer, this.renderer.palette, this.st, (m) => this.ui.showError(m));
  }

  private fail(e: unknown): void {
    const msg = e instanceof Error ? e.message : String(e);
    if (msg === "superseded") return;
    this.ui.setStatus("error");
    this.ui.showError(msg);
    this.main.redraw();
  }

  /** The main view's scene changed: warnings, the selection if it is gone, colours, trace. */
  private modelSet(model: SceneModel | null): void {
    renderWarnings(this.ui.warnings, model, this.uploads.noteFor(this.main.ref));
    this.ui.bar.showKernels(Number(model?.scene.stats?.kernels ?? 0) > 0 || !!this.main.view.kernels);
    if (this.st.selected && !model?.node(this.st.selected)) {
      // the selected node is gone (collapsed, ungrouped, other graph): so is its info pane
      this.st.selected = null;
      clear(this.ui.infoBox);
      this.body.dataset.infoName = "";
    }
    this.st.hover = null;
    this.ui.status.textContent = "";
    this.body.dataset.selected = this.st.selected ?? "";
    this.colors.refreshColors();
    this.colors.updateTrace();
    if (model) this.nodeData.sceneChanged(); // the values of what this scene shows
  }
}
