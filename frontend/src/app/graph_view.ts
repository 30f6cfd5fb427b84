// One graph view: a canvas with its own viewport, renderer, minimap and frame loop, the graph it
// shows (ref, view options, open groups), its indexed scene and its draw state (selection,
// trace, removed nodes, hover). It loads scenes (app/scene_loader.ts), keeps the view where the
// user looks when a group opens, and hands clicks to its host. The app holds one (the main
// view) and the split pane a second (app/split_pane.ts); nothing here is shared between them.
import type * as api from "../api/client";
import { DEFAULT_VIEW } from "../api/client";
import type { GraphRef, Job } from "../api/types";
import { Minimap } from "../render/minimap";
import type { SceneModel } from "../render/model";
import { Renderer, type DrawState } from "../render/renderer";
import { Viewport } from "../render/viewport";
import { wireCanvas } from "./canvas_input";
import { FrameLoop, timed } from "./frame_loop";
import { viewText, type ViewPoint } from "./deep_link";
import { fitClear, fitMain, type Corner } from "./navigation";
import { SceneLoader, sameGraph } from "./scene_loader";
import type { Status } from "./shell";

/** Where a view tells the user about its loads (the Shell, or a pane's own header). */
export interface LoadUi {
  setStatus(s: Status): void;
  showError(message: string | null): void;
  showProgress(job: Job | null, text?: string): void;
  showEmpty(text: string | null): void;
}

/** What a view asks of its owner. */
export interface GraphViewHost {
  readonly ui: LoadUi;
  /** where the view's figures go (draw stats, load timings): the page's body for the main view */
  readonly data: DOMStringMap;
  /** the scene as it should be drawn (the compare ghosts added, or itself) */
  decorate(model: SceneModel): Promise<SceneModel>;
  /** the view's scene is now `model` (already assigned): refresh what depends on it */
  modelSet(model: SceneModel | null): void;
  select(name: string | null): void;
  toggleExpand(name: string): void;
  hover(name: string | null): void;
  /** a load failed (not superseded) */
  fail(e: unknown): void;
  /** after every redraw request (the main view keeps the URL in step) */
  redrawn(): void;
  /** the box over the canvas's bottom-left corner a fit keeps nodes out of (its legend) */
  corner(): Corner;
}

/** A node kept where it is on the page across a new scene: its canvas position, and the
 * canvas's top on the page then (a warning line shown above the canvas moves it down). */
export type Anchor = { name: string; sx: number; sy: number; top?: number };

export class GraphView {
  readonly renderer: Renderer;
  readonly vp = new Viewport();
  readonly minimap: Minimap;
  readonly loader: SceneLoader;
  private readonly loop: FrameLoop;
  readonly st: DrawState = { selected: null, traced: null, tracedEdges: null, hidden: new Set(), hover: null };
  ref: GraphRef | null = null;
  view: api.ViewOptions = { ...DEFAULT_VIEW };
  expanded: string[] = [];
  model: SceneModel | null = null;
  lastLoadError = "";

  constructor(readonly canvas: HTMLCanvasElement, miniCanvas: HTMLCanvasElement, private readonly host: GraphViewHost) {
    this.renderer = new Renderer(canvas);
    this.minimap = new Minimap(miniCanvas, (x, y) => {
      const [w, h] = this.renderer.size();
      this.vp.centerOn(x, y, w, h);
      this.redraw();
    });
    this.loader = new SceneLoader(host.ui, host.data);
    this.loop = new FrameLoop(this.renderer, this.minimap, this.vp, () => this.st, () => this.model, host.data);
  }

  /** Pointer input on the canvas and redraws on resize of `stage` (the box the canvas fills). */
  attach(stage: HTMLElement): void {
    wireCanvas(this.canvas, {
      vp: this.vp,
      model: () => this.model,
      hidden: () => this.st.hidden,
      isGroup: (n) => this.isGroup(n),
      select: (n) => this.host.select(n),
      toggleExpand: (n) => this.host.toggleExpand(n),
      hover: (name) => this.host.hover(name),
      redraw: () => this.redraw(),
    });
    let lastW = this.renderer.size()[0];
    new ResizeObserver(() => {
      // a width change keeps the world point at the canvas's centre column there (the split pane
      // opening halves the main canvas: its graph stayed left-anchored, half of it behind the
      // pane); a height change keeps the top (lines shown and hidden below the canvas change its
      // height, and an expanded group must stay where it was)
      const w = this.renderer.size()[0];
      if (this.model && lastW > 1 && w !== lastW) this.vp.pan((w - lastW) / 2, 0);
      lastW = w;
      this.renderer.resize();
      this.loop.minimapDirty();
      this.redraw();
    }).observe(stage);
  }

  /**
   * Fetches the scene for the current expansion state. With an anchor (a node name and its
   * screen position before) the viewport is moved so that node stays where it was.
   */
  async loadScene(anchor: Anchor | null, then?: () => void, firstView = false, quiet = false): Promise<boolean> {
    const ref = this.ref;
    if (!ref) return false;
    let model: SceneModel | null;
    try {
      const view = firstView ? { ...this.view, firstView: true } : this.view;
      model = await this.loader.load(ref, view, this.expanded, this.model);
    } catch (e) {
      this.lastLoadError = e instanceof Error ? e.message : String(e);
      if (quiet) return false; // the caller decides (a deep link's group that is gone)
      this.host.fail(e);
      // keep the last scene on screen and its expansion state as the truth
      if (this.model && sameGraph(this.model.scene.graph, ref)) this.expanded = this.model.scene.expanded;
      return false;
    }
    if (!model) return false; // superseded by a newer load
    model = await this.host.decorate(model); // ghosts of the nodes removed, when comparing
    const scene = model.scene;
    this.expanded = scene.expanded;
    this.host.data.expanded = JSON.stringify(scene.expanded);
    timed("gx:setModel", () => this.setModel(model));
    const [w, h] = this.renderer.size();
    const node = anchor ? model.node(anchor.name) : undefined;
    if (anchor && node) {
      const moved = anchor.top === undefined ? 0 : this.canvas.getBoundingClientRect().top - anchor.top;
      this.vp.tx = anchor.sx - node.x * this.vp.k;
      this.vp.ty = anchor.sy - moved - node.y * this.vp.k;
    } else if (!anchor) {
      fitMain(this.vp, model, w, h, this.host.corner());
    }
    this.host.ui.setStatus(scene.nodes.length ? "ready" : "empty");
    if (!scene.nodes.length) this.host.ui.showEmpty("This graph is empty.");
    if (then) then();
    this.redraw();
    return true;
  }

  setModel(model: SceneModel | null): void {
    this.model = model;
    this.host.data.sceneNodes = String(model?.nodes.length ?? 0);
    this.host.data.sceneEdges = String(model?.edges.length ?? 0);
    this.host.modelSet(model);
  }

  isGroup(name: string): boolean {
    const n = this.model?.node(name);
    // a group holding a single op is still a group: it opens like any other
    return !!n && (n.kind === "meta" || n.kind === "series");
  }

  /** Opens or closes group `name` (closing closes the groups inside it too), keeping it where it is on screen. */
  toggle(name: string, then?: () => void): void {
    if (!this.isGroup(name) || !this.model) return;
    const node = this.model.node(name)!;
    const [sx, sy] = this.vp.toScreen(node.x, node.y);
    if (this.expanded.includes(name)) {
      this.expanded = this.expanded.filter((g) => g !== name && !g.startsWith(name + "/"));
    } else {
      this.expanded = [...this.expanded, name];
    }
    void this.loadScene({ name, sx, sy, top: this.canvas.getBoundingClientRect().top }, then);
  }

  /** Pans (keeping the zoom) so the node is on screen when it is not. */
  reveal(name: string): void {
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
    fitClear(this.vp, this.model, this.model.bounds, w, h, 20, this.host.corner());
    this.redraw();
  }

  /** The world point at the centre of the view. */
  center(): [number, number] {
    const [w, h] = this.renderer.size();
    return this.vp.toWorld(w / 2, h / 2);
  }

  /** The pan and zoom as a link's text (app/deep_link.ts: viewText); null with no scene drawn. */
  viewLinkText(): string | null {
    if (!this.model) return null;
    const [x, y] = this.center();
    return viewText({ x, y, k: this.vp.k });
  }

  /** Shows the view a link names: its centre point at the canvas's centre, at its scale. */
  showView(v: ViewPoint): void {
    const [w, h] = this.renderer.size();
    this.vp.k = v.k;
    this.vp.centerOn(v.x, v.y, w, h);
    this.redraw();
  }

  minimapDirty(): void {
    this.loop.minimapDirty();
  }

  redraw(): void {
    this.loop.redraw();
    this.host.redrawn();
  }
}
