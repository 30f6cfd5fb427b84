// The main view's colour and trace modes: the toolbar's Color and Trace pickers, the colourer
// the renderer draws with (render/colors.ts; the diff's, app/compare.ts; a node-data series',
// app/node_data.ts), its legend, and the path traced from the selection over the drawn edges
// (app/trace.ts). A diff arriving or going switches the colour mode with it.
import { Colorer, type ColorMode } from "../render/colors";
import type { Toolbar } from "../ui/toolbar";
import type { Compare } from "./compare";
import type { GraphView } from "./graph_view";
import { renderLegend } from "./legend";
import type { NodeDataPanel } from "./node_data";
import { traceFrom, type TraceMode } from "./trace";

export interface ColorTraceHost {
  readonly main: GraphView;
  readonly bar: Toolbar;
  readonly legend: HTMLElement;
  /** where the modes and the traced count go (the page's body) */
  readonly data: DOMStringMap;
  readonly compare: Compare;
  readonly nodeData: NodeDataPanel;
  /** the main view's colours changed: the second pane's follow */
  colorsChanged(): void;
  /** a diff arrived or was dropped: the second pane's ghosts and colours follow */
  diffChanged(): void;
}

export class ColorTrace {
  colorMode: ColorMode = "none";
  traceMode: TraceMode = "off";

  constructor(private readonly host: ColorTraceHost) {}

  /** The Color picker changed. */
  chooseColor(): void {
    const b = this.host.bar;
    this.colorMode = this.host.nodeData.choose(b.color.value) ? "node_data" : b.color.value as ColorMode;
    this.refreshColors();
  }

  /** The Trace picker changed. */
  chooseTrace(): void {
    this.traceMode = this.host.bar.trace.value as TraceMode;
    this.updateTrace();
  }

  /** The info pane's "trace inputs". */
  traceInputs(): void {
    this.host.bar.trace.value = "inputs";
    this.traceMode = "inputs";
    this.updateTrace();
  }

  /** A deep link's modes (app/restore.ts): each one given is set. */
  restore(color: ColorMode | null, trace: TraceMode | null, nodeData: string | null): void {
    const { bar, nodeData: panel } = this.host;
    if (color) bar.color.value = this.colorMode = color;
    if (nodeData && panel.choose(nodeData)) {
      this.colorMode = "node_data";
      // its option comes with the tags if they are not listed yet
      bar.color.value = panel.choice() ?? "none";
    }
    if (trace) bar.trace.value = this.traceMode = trace;
    this.refreshColors();
  }

  /** No colours, no trace (a bookmark opens: its own modes come with it). */
  reset(): void {
    const bar = this.host.bar;
    bar.color.value = this.colorMode = "none";
    this.host.nodeData.choose("none");
    bar.trace.value = this.traceMode = "off";
  }

  /** The colour mode as a link names it (a node-data series by its choice). */
  linkColor(): string {
    return this.colorMode === "node_data" ? this.host.nodeData.linkChoice() ?? "none" : this.colorMode;
  }

  refreshColors(): void {
    const { main, compare, nodeData } = this.host;
    const renderer = main.renderer;
    const nodes = main.model?.nodes ?? [];
    renderer.colorer = (this.colorMode === "diff" && compare.colorer(nodes, renderer.dark))
      || (this.colorMode === "node_data" && nodeData.colorer(nodes, renderer.dark))
      || new Colorer(this.colorMode, nodes, renderer.dark);
    this.host.data.colorMode = this.colorMode;
    renderLegend(this.host.legend, renderer.colorer, main.model, renderer.palette, this.host.data,
      !!main.st.matched?.size);
    main.minimapDirty();
    this.host.colorsChanged();
    main.redraw();
  }

  /** Marks everything upstream/downstream of the selection over the drawn edges. */
  updateTrace(): void {
    const { main, data } = this.host;
    const t = traceFrom(main.model, main.st.selected, this.traceMode);
    main.st.traced = t?.nodes ?? null;
    main.st.tracedEdges = t?.edges ?? null;
    data.traced = String(t ? t.nodes.size - 1 : 0);
    main.redraw();
  }

  /** A diff arrived or was dropped: ghosts in or out of the scene, the diff colours on or off. */
  async diffChanged(): Promise<void> {
    const { main, compare } = this.host;
    const on = !!compare.active;
    if (on !== (this.colorMode === "diff")) {
      this.colorMode = on ? "diff" : "none";
      this.host.bar.color.value = this.colorMode;
      this.host.nodeData.choose(this.colorMode); // a node-data colouring gives way (its controls hide)
    }
    if (main.model) {
      const model = await compare.decorate(main.model);
      if (model !== main.model) main.setModel(model);
    }
    this.host.diffChanged();
    this.refreshColors();
  }
}
