// The split pane: a second graph (another run, step or upload) side by side with the main one,
// in a graph view of its own (app/graph_view.ts: its own canvas, viewport, minimap, open groups
// and selection). The pane's graph is the base (A) the main graph (B) is compared with, so the
// toolbar's Compare picker and the pane's picker are one choice, and the diff colours show in both:
// B as before (added, changed, ghosts of removed), A its removed and changed nodes. Selecting a
// node in one pane selects its match in the other, by the diff's matching (app/diff_match.ts;
// by equal name when the diff is off or failed): the match is opened the way a search hit is
// (navigation.jump: the groups holding it open), and a node without match says so in the pane's
// note. Figures go to the pane's own dataset ([data-pane=split]); text only.
import type { GraphRef, SceneNode } from "../api/types";
import { Colorer, type ColorMode, type LegendEntry } from "../render/colors";
import type { SceneModel } from "../render/model";
import { clear, el, option } from "../ui/dom";
import { loadPrefs } from "../ui/prefs";
import { DIFF_COLOR, GHOST_PREFIX, refFromKey, refKey, refText, type Compare } from "./compare";
import { DiffMatching } from "./diff_match";
import { GraphView, type LoadUi } from "./graph_view";
import type { KeyHost } from "./keyboard";
import { legendCorner, renderLegend } from "./legend";
import { jump, type NavHost } from "./navigation";
import { sameGraph } from "./scene_loader";

/** A's removed nodes, solid: in A they are real nodes, not ghosts. */
export const REMOVED_IN_BASE = "#e06055";
const MATCHED_KINDS = new Set(["op", "meta", "series"]);

/** Colours A's nodes by the diff: removed (only in A) red, changed amber, the same grey. */
export class BaseDiffColorer extends Colorer {
  private readonly changed = new Set<string>();
  constructor(private readonly m: DiffMatching, nodes: SceneNode[], dark: boolean) {
    super("diff", nodes, dark);
    for (const e of m.diff.entries) if (e.status === "changed") this.changed.add(e.old_name ?? e.name);
  }
  fill(n: SceneNode): string | null {
    if (this.m.isRemoved(n.name)) return REMOVED_IN_BASE;
    return this.changed.has(n.name) ? DIFF_COLOR.changed : null;
  }
  legend(): LegendEntry[] {
    const c = this.m.diff.counts;
    const n = (s: string) => `${c.ops?.[s] ?? 0} ops, ${c.groups?.[s] ?? 0} groups`;
    return [
      { color: REMOVED_IN_BASE, label: `removed (only here): ${n("removed")}` },
      { color: DIFF_COLOR.changed, label: `changed: ${n("changed")}` },
    ];
  }
}

export interface SplitHost {
  compare: Compare;
  mainRef(): GraphRef | null;
  mainModel(): SceneModel | null;
  /** the node selected in the main view */
  mainSelected(): string | null;
  colorMode(): ColorMode;
  dark(): boolean;
  /** select B's node `name` in the main view, opening the groups that hold it */
  selectInMain(name: string): void;
  /** the pane opened, closed or shows another graph (the URL follows) */
  changed(): void;
}

export class SplitPane {
  readonly button = el("button", { text: "Split", "data-action": "split", title: "Open a second graph side by side (it is also the graph compared with)", "aria-pressed": "false" });
  readonly root = el("div", { className: "gx-pane2", "data-pane": "split" });
  private readonly picker = el("select", { "data-picker": "split", title: "The graph of the second pane" });
  private readonly closeBtn = el("button", { text: "×", "data-action": "split-close", title: "Close the second pane" });
  private readonly note = el("span", { className: "gx-muted gx-pane-note", "data-pane-note": "", role: "status" });
  private readonly error = el("div", { className: "gx-error", "data-pane-error": "", role: "alert" });
  private readonly stage = el("div", { className: "gx-stage" });
  private readonly canvas = el("canvas", { className: "gx-canvas", "data-split-canvas": "" });
  private readonly mini = el("canvas", { className: "gx-minimap gx-minimap-small", "data-split-minimap": "" });
  private readonly legend = el("div", { className: "gx-legend", "data-split-legend": "" });
  private readonly empty = el("div", { className: "gx-empty" });
  private readonly status = el("div", { className: "gx-status" });
  private readonly data = this.root.dataset;
  readonly view: GraphView;
  private readonly nav: NavHost;
  private isOpen = false;
  /** Counts the calls of open(): a call whose graph another call replaced while it loaded stops. */
  private opening = 0;

  constructor(private readonly host: SplitHost) {
    const ui: LoadUi = {
      setStatus: (s) => (this.data.status = s),
      showError: (message) => {
        this.error.textContent = message ?? "";
        this.error.classList.toggle("gx-on", !!message);
        this.data.error = message ?? "";
      },
      showProgress: (job, text) => {
        this.status.textContent = job ? `${job.stage} ${Math.round(job.progress * 100)}%` : text ?? "";
      },
      showEmpty: (text) => {
        if (text !== null) this.empty.textContent = text;
        this.empty.classList.toggle("gx-on", text !== null);
      },
    };
    this.view = new GraphView(this.canvas, this.mini, {
      ui,
      data: this.data,
      decorate: async (model) => model,
      modelSet: (model) => {
        const st = this.view.st;
        if (st.selected && !model?.node(st.selected)) st.selected = null;
        st.hover = null;
        this.data.selected = st.selected ?? "";
        this.refreshColors();
      },
      select: (name) => this.selectHere(name),
      toggleExpand: (name) => this.view.toggle(name),
      hover: (name) => {
        if (name === this.view.st.hover) return;
        this.view.st.hover = name;
        this.status.textContent = name ?? "";
        this.canvas.title = name ?? "";
        this.view.redraw();
      },
      fail: (e) => {
        const msg = e instanceof Error ? e.message : String(e);
        if (msg === "superseded") return;
        ui.setStatus("error");
        ui.showError(msg);
      },
      redrawn: () => undefined,
      corner: () => legendCorner(this.legend),
    });
    const view = this.view;
    this.nav = {
      vp: view.vp,
      ref: () => view.ref,
      view: () => view.view,
      model: () => view.model,
      screen: () => view.renderer.size(),
      expanded: () => view.expanded,
      expand: (groups) => {
        view.expanded = [...view.expanded, ...groups];
        return view.loadScene(null);
      },
      select: (name) => this.setSelected(name),
      showError: (message) => this.say(message),
    };
    this.button.addEventListener("click", () => (this.isOpen ? this.close() : void this.open(null)));
    this.closeBtn.addEventListener("click", () => this.close());
    this.picker.addEventListener("change", () => {
      const ref = refFromKey(this.picker.value);
      if (ref) void this.open(ref);
    });
    this.stage.append(this.canvas, this.status, this.empty, this.legend, this.mini);
    this.root.append(
      el("div", { className: "gx-pane-head" }, el("label", {}, "Side by side", this.picker), this.note, this.closeBtn),
      this.error,
      this.stage,
    );
    this.data.open = "false";
  }

  /** Puts the pane (closed) right of `mainStage`. */
  mount(mainStage: HTMLElement): void {
    mainStage.after(this.root);
    this.view.attach(this.stage);
  }

  /** The pane's graph while it is open. */
  get ref(): GraphRef | null {
    return this.isOpen ? this.view.ref : null;
  }

  /** Every graph of the listing as a choice (the Compare picker's). */
  fill(): void {
    const keep = this.picker.value;
    clear(this.picker);
    for (const o of this.host.compare.picker.options) if (o.value) this.picker.appendChild(option(o.value, o.text, o.value === keep));
  }

  /** Opens the pane on `ref` (null: the graph compared with, else the first other graph listed). */
  async open(ref: GraphRef | null): Promise<void> {
    const main = this.host.mainRef();
    if (!ref) ref = this.host.compare.base ?? this.firstOther(main);
    if (!ref) {
      this.say("There is no other graph to show beside this one.");
      this.isOpen = true;
      this.show();
      return;
    }
    const call = ++this.opening;
    const key = refKey(ref);
    if (![...this.picker.options].some((o) => o.value === key)) this.picker.appendChild(option(key, refText(ref)));
    this.picker.value = key;
    const same = this.isOpen && this.view.ref && sameGraph(this.view.ref, ref);
    this.isOpen = true;
    this.show();
    const v = this.view;
    if (!same) {
      v.ref = ref;
      v.expanded = [];
      v.st.selected = null;
      v.st.hover = null;
      const prefs = loadPrefs(ref);
      v.st.hidden = prefs.hidden;
      v.view = prefs.view;
      this.data.ref = key;
      this.data.selected = "";
      this.say("");
    }
    // The pane's graph is the one compared with: the diff colours and the matching follow. The
    // target is set before anything is awaited, so the diff of an earlier choice still under way
    // is dropped (Compare keeps the newest) and never brings that choice back (diffChanged).
    const base = this.host.compare.base;
    const diffing = !base || !sameGraph(base, ref) ? this.host.compare.setTarget(ref) : null;
    if (!same) {
      v.setModel(null);
      v.loader.cancel();
      await v.loadScene(null, undefined, true);
    }
    await diffing;
    // another graph was picked while this one loaded: that call goes on, not this one
    if (call !== this.opening) return;
    this.host.changed();
    this.follow(this.host.mainSelected());
  }

  close(): void {
    if (!this.isOpen) return;
    this.isOpen = false;
    this.show();
    this.host.changed();
  }

  private show(): void {
    this.root.classList.toggle("gx-on", this.isOpen);
    this.button.setAttribute("aria-pressed", String(this.isOpen));
    this.data.open = String(this.isOpen);
    document.body.dataset.split = this.isOpen ? this.picker.value : "";
    if (this.isOpen) {
      this.view.renderer.resize();
      this.refreshColors();
    }
  }

  private firstOther(main: GraphRef | null): GraphRef | null {
    for (const o of this.host.compare.picker.options) {
      const r = o.value ? refFromKey(o.value) : null;
      if (r && (!main || !sameGraph(r, main))) return r;
    }
    return null;
  }

  private matching(): DiffMatching | null {
    const d = this.host.compare.active;
    const ref = this.view.ref;
    return d && ref && sameGraph(d.base, ref) ? new DiffMatching(d) : null;
  }

  private say(text: string): void {
    this.note.textContent = text;
    this.note.title = text;
    this.data.note = text;
  }

  /** The diff (or none) changed: the pane shows the graph compared with, in the diff's colours. */
  diffChanged(): void {
    const base = this.host.compare.base;
    if (this.isOpen && base && (!this.view.ref || !sameGraph(base, this.view.ref))) {
      void this.open(base);
      return;
    }
    this.refreshColors();
  }

  refreshColors(): void {
    if (!this.isOpen) return;
    const v = this.view;
    const nodes = v.model?.nodes ?? [];
    const mode = this.host.colorMode();
    const m = mode === "diff" ? this.matching() : null;
    v.renderer.setDark(this.host.dark());
    v.renderer.colorer = m ? new BaseDiffColorer(m, nodes, this.host.dark()) : new Colorer(mode === "diff" ? "none" : mode, nodes, this.host.dark());
    renderLegend(this.legend, v.renderer.colorer, v.model, v.renderer.palette, this.data);
    v.minimapDirty();
    v.redraw();
  }

  private setSelected(name: string | null): void {
    const v = this.view;
    v.st.selected = name;
    this.data.selected = name ?? "";
    if (name) v.reveal(name);
    v.redraw();
  }

  /** The pane as the keys see it (app/keyboard.ts: they act here once its canvas is focused):
   * arrows select here (and the match in the main view, as a click does), Enter and Escape open
   * and close its groups, "f" fits it. */
  keyHost(focusSearch: () => void): KeyHost {
    const v = this.view;
    return {
      model: () => v.model,
      selected: () => v.st.selected,
      select: (name) => this.selectHere(name),
      isGroup: (name) => v.isGroup(name),
      isExpanded: (name) => v.expanded.includes(name),
      toggleExpand: (name) => v.toggle(name, () => this.setSelected(name)),
      fit: () => v.fit(),
      focusSearch,
      reveal: (name) => v.reveal(name),
      center: () => v.center(),
    };
  }

  /** Whether the pane is open (the keys go back to the main view when it closes). */
  isShown(): boolean {
    return this.isOpen;
  }

  /** A click in the pane: select there, and the match in the main view. */
  private selectHere(name: string | null): void {
    this.setSelected(name);
    if (!name) return;
    const n = this.view.model?.node(name);
    if (!n || !MATCHED_KINDS.has(n.kind)) return;
    const m = this.matching();
    let other = m ? m.bOf(name) : name;
    if (other === null) {
      // removed: B's scene has it only as a ghost, when it is drawn
      const ghost = GHOST_PREFIX + name;
      other = this.host.mainModel()?.node(ghost) ? ghost : null;
      if (!other) {
        this.say(`${name} is only in this graph (removed).`);
        this.data.match = "";
        return;
      }
    }
    this.say(m ? "" : "No diff: matched by name.");
    this.data.match = other;
    if (this.host.mainSelected() !== other) this.host.selectInMain(other);
  }

  /** The main view selected B's node `name` (or nothing): select its match here. */
  follow(name: string | null): void {
    if (!this.isOpen || !this.view.model) return;
    if (!name) {
      this.data.match = "";
      return;
    }
    const mainNode = this.host.mainModel()?.node(name);
    if (mainNode && !MATCHED_KINDS.has(mainNode.kind) && !name.startsWith(GHOST_PREFIX)) return;
    const m = this.matching();
    const other = m ? m.aOf(name) : name;
    if (other === null) {
      this.setSelected(null);
      this.data.match = "";
      this.say(`${name} is only in the main graph (added).`);
      return;
    }
    this.say(m ? "" : "No diff: matched by name.");
    this.data.match = other;
    if (this.view.st.selected === other) return;
    if (this.view.model.node(other)) this.setSelected(other);
    else void jump(this.nav, other); // inside a closed group here: open it, as search does
  }
}
