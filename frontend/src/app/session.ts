// Which graph the main view shows and how it came to show it: the listing (asked for before the
// page is built), then the default graph or the view a deep link names (app/restore.ts); a
// bookmark; a graph picked in the toolbar; an upload. Once a deep link is applied the URL is
// kept in step with the view (app/link_bar.ts), and its state is read here.
import type { GraphRef, Listing } from "../api/types";
import { markOnce } from "../marks";
import { clear } from "../ui/dom";
import type { ColorTrace } from "./color_trace";
import { refKey, type Compare } from "./compare";
import type { LinkState } from "./deep_link";
import type { GraphChoices } from "./graph_choices";
import type { GraphView } from "./graph_view";
import type { LinkBar } from "./link_bar";
import { pickDefault, syncPickers } from "./pickers";
import { applyRestore, type Restore, resolveLink } from "./restore";
import type { Shell } from "./shell";
import type { SplitPane } from "./split_pane";
import type { Uploads } from "./upload";

export interface SessionHost {
  readonly ui: Shell;
  readonly main: GraphView;
  readonly link: LinkBar;
  readonly uploads: Uploads;
  readonly compare: Compare;
  readonly split: SplitPane;
  readonly colors: ColorTrace;
  readonly choices: GraphChoices;
  /** the listing came: what lists the graphs fills (compare, node data, split pane, bookmarks) */
  listed(listing: Listing): void;
  /** a graph opens: the last one's search goes */
  opening(): void;
  select(name: string): void;
  jump(name: string): Promise<void>;
  fail(e: unknown): void;
}

export class Session {
  listing: Listing = { runs: [], default: null, data_location: "", version: 1 };
  /** until a deep link is applied, the URL is not rewritten */
  restoring = true;

  constructor(private readonly listingAnswer: Promise<Listing>, private readonly host: SessionHost) {}

  /** Waits for the listing, then opens what the link names, or the default graph, or says there is none. */
  async start(): Promise<void> {
    const ui = this.host.ui;
    try {
      this.listing = await this.listingAnswer;
      ui.showProgress(null);
      markOnce("listing");
      this.host.listed(this.listing);
    } catch (e) {
      ui.showProgress(null);
      this.host.fail(e);
      return;
    }
    const first = pickDefault(this.listing);
    const restore = resolveLink(this.listing, await this.host.link.read(), first);
    if (restore) {
      void this.restore(restore);
      return;
    }
    this.restoring = false;
    if (!first) {
      ui.setStatus("empty");
      ui.showEmpty("No graph data in this logdir.\n" +
        "Graphs are written by tf.summary.trace_on / trace_export, TF1's FileWriter.add_graph, Keras's TensorBoard " +
        "callback (functional and Sequential models: a subclassed Keras 3 model writes none, trace its train step " +
        "instead), torch's SummaryWriter.add_graph and tb_graph_plugin.torch.add_graph.\n" +
        "Or upload a GraphDef (.pbtxt or .pb), a PyTorch graph (.pt2, .onnx) or an event file to explore it.");
      ui.bar.fillRuns(this.listing, "");
      return;
    }
    this.open(first);
  }

  /** Opens a graph from scratch: restores its removed-node set, fits it on screen. */
  open(ref: GraphRef, noFirstView = false): void {
    const { main, ui } = this.host;
    main.ref = ref;
    main.expanded = [];
    main.st.selected = null;
    this.host.choices.load(ref);
    syncPickers(ui.bar, this.listing, ref);
    clear(ui.infoBox);
    this.host.opening();
    this.host.choices.renderLists();
    ui.showEmpty(null);
    main.setModel(null); // never show the previous graph under the new pickers
    main.loader.cancel();
    if (!noFirstView) void main.loadScene(null, undefined, true);
    if (this.host.compare.base) void this.host.compare.refresh();
  }

  /** The state a link or a bookmark keeps of the view. */
  linkState(): LinkState | null {
    const { main, compare, colors } = this.host;
    const split = this.host.split.ref;
    return this.host.link.state(main.ref, main.expanded, main.st.selected, colors.linkColor(), colors.traceMode,
      compare.base ? refKey(compare.base) : null, split ? refKey(split) : null, main.viewLinkText());
  }

  /** Opens a saved view (a bookmark): the deep link's way, its colours and trace exactly as saved. */
  openLink(link: LinkState): void {
    const restore = resolveLink(this.listing, link, pickDefault(this.listing));
    if (!restore) return;
    this.restoring = true;
    this.host.colors.reset();
    void this.restore(restore);
  }

  /** The toolbar's file input: the uploaded graph opens (and can be compared). */
  async uploadFile(): Promise<void> {
    try {
      const ref = await this.host.uploads.fromInput(this.host.ui, this.listing);
      this.host.compare.fill(this.listing); // an upload can be compared with, or compared
      this.host.split.fill();
      if (ref) this.open(ref);
    } catch (e) {
      this.host.fail(e);
    }
  }

  /** Opens the view a deep link names (app/restore.ts: applyRestore), then keeps the URL in step. */
  private async restore(r: Restore): Promise<void> {
    const { main, compare, split, link, colors } = this.host;
    await applyRestore(r, {
      open: (ref) => this.open(ref, true),
      firstView: () => main.loadScene(null, undefined, true),
      loadExpanded: async (groups) => {
        main.expanded = groups;
        return (await main.loadScene(null, undefined, false, true)) ? null : main.lastLoadError;
      },
      compare: async (ref) => {
        if (ref || compare.base) await compare.setTarget(ref);
      },
      split: async (ref) => {
        if (ref) await split.open(ref);
        else split.close();
      },
      modes: (color, trace, nodeData) => colors.restore(color, trace, nodeData),
      shown: (name) => !!main.model?.node(name),
      exists: async (name) => !!main.ref && (await link.nodeExists(main.ref, main.view, name)),
      select: (name) => {
        this.host.select(name);
        main.reveal(name);
      },
      jump: (name) => this.host.jump(name),
      view: (v) => main.showView(v),
      warn: (lines) => link.warn(lines),
    });
    colors.updateTrace();
    this.restoring = false;
    this.host.ui.body.dataset.restored = "true";
    main.redraw();
  }
}
