// Restoring a deep link: the LinkState read from the URL checked against the
// server's Listing, giving the closest valid view and a warning for each part that could not
// be honoured (unknown run, tag, graph type or step; unknown colour or trace mode; compare
// target or second pane's graph gone; a pan and zoom that is not one), then applied (applyRestore): the groups and the selected node are checked
// against the graph itself (the server refuses a group the graph does not have: it is dropped
// and the scene asked for again; the node is looked up on the server); the pan and zoom last.
import type { GraphKind, GraphRef, Listing } from "../api/types";
import { COLOR_MODES, type ColorMode } from "../render/colors";
import { MAX_SCALE, MIN_SCALE } from "../render/viewport";
import { kindsOf } from "../ui/toolbar";
import { refFromKey } from "./compare";
import { parseView, type LinkState, type ViewPoint } from "./deep_link";
import { isNodeDataChoice } from "./node_data";
import type { TraceMode } from "./trace";

const TRACE_MODES: TraceMode[] = ["off", "inputs", "outputs", "both"];

export interface Restore {
  ref: GraphRef;
  expanded: string[] | null; // null: the server's first view
  selected: string | null;
  color: ColorMode | null;
  /** a node-data tag to colour by (app/node_data.ts's `nd:["run","tag"]`), instead of `color` */
  nodeData: string | null;
  trace: TraceMode | null;
  compare: GraphRef | null;
  split: GraphRef | null; // the second pane's graph
  view: ViewPoint | null; // the main pane's pan and zoom (null: the graph fitted as it opens)
  warnings: string[];
}

/** The graph a link names, or the closest one the listing has (same run, then the default). */
function resolveRef(listing: Listing, link: LinkState, fallback: GraphRef | null, warn: (s: string) => void): GraphRef | null {
  if (!link.run) return fallback;
  const run = listing.runs.find((r) => r.run === link.run);
  if (!run) {
    warn(`The link names run "${link.run}", which this TensorBoard does not have: opened ${fallback ? `run "${fallback.run}"` : "nothing"} instead.`);
    return fallback;
  }
  let tag = run.tags.find((t) => t.tag === link.tag && kindsOf(t).length);
  if (!tag) {
    tag = run.tags.find((t) => kindsOf(t).length);
    if (!tag) return fallback;
    if (link.tag) warn(`Run "${run.run}" has no graph tag "${link.tag}": opened tag "${tag.tag}".`);
  }
  const kinds = kindsOf(tag);
  let kind = (link.kind ?? kinds[0]) as GraphKind;
  if (!kinds.includes(kind)) {
    warn(`Tag "${tag.tag}" has no ${link.kind} graph: opened its ${kinds[0]} graph.`);
    kind = kinds[0];
  }
  let step: number | null = null;
  if (link.step !== undefined) {
    const n = Number(link.step);
    if (Number.isInteger(n) && tag.steps.some((s) => s.step === n)) step = n;
    else warn(`Tag "${tag.tag}" has no step ${link.step}: opened the latest step.`);
  }
  return { run: run.run, tag: tag.tag, kind, step };
}

export function resolveLink(listing: Listing, link: LinkState, fallback: GraphRef | null): Restore | null {
  const warnings: string[] = [];
  const warn = (s: string) => warnings.push(s);
  const ref = resolveRef(listing, link, fallback, warn);
  if (!ref) return null;
  const sameGraph = !!link.run && ref.run === link.run && ref.tag === (link.tag ?? ref.tag);
  let color: ColorMode | null = null;
  let nodeData: string | null = null;
  if (link.color) {
    if (COLOR_MODES.some((m) => m.id === link.color)) color = link.color as ColorMode;
    else if (isNodeDataChoice(link.color)) nodeData = link.color;
    else warn(`Unknown colour mode "${link.color}" in the link: colours off.`);
  }
  let trace: TraceMode | null = null;
  if (link.trace) {
    if ((TRACE_MODES as string[]).includes(link.trace)) trace = link.trace as TraceMode;
    else warn(`Unknown trace mode "${link.trace}" in the link: trace off.`);
  }
  const listed = (key: string): GraphRef | null => {
    const c = refFromKey(key);
    const known = c && listing.runs.find((r) => r.run === c.run)?.tags.find((t) => t.tag === c.tag && kindsOf(t).includes(c.kind));
    return c && known && (c.step === null || known.steps.some((s) => s.step === c.step)) ? c : null;
  };
  let compare: GraphRef | null = null;
  if (link.compare) {
    compare = listed(link.compare);
    if (!compare) warn(`The graph to compare with (${link.compare}) is not in this TensorBoard: not comparing.`);
  }
  let split: GraphRef | null = null;
  if (link.split) {
    split = listed(link.split);
    if (!split) warn(`The graph of the second pane (${link.split}) is not in this TensorBoard: one pane only.`);
  }
  let view: ViewPoint | null = null;
  if (sameGraph && link.view) {
    view = parseView(link.view, MIN_SCALE, MAX_SCALE);
    if (!view) warn(`The link's view "${link.view.slice(0, 60)}" is not a pan and zoom (x,y,scale): the graph is fitted to the window.`);
  }
  return {
    ref,
    // groups, selection and pan/zoom only mean something in the graph the link named
    expanded: sameGraph && link.expanded ? link.expanded : null,
    selected: sameGraph && link.selected ? link.selected : null,
    color,
    nodeData,
    trace,
    compare,
    split,
    view,
    warnings,
  };
}

/** What applying a Restore needs from the app. */
export interface RestoreHost {
  open(ref: GraphRef): void; // the graph, no scene yet
  firstView(): Promise<boolean>; // the server's first view
  /** this expansion state; null when it loaded, else the load's error message */
  loadExpanded(groups: string[]): Promise<string | null>;
  compare(ref: GraphRef | null): Promise<void>; // compare with this graph, or stop comparing
  split(ref: GraphRef | null): Promise<void>; // the second pane on this graph, or closed
  modes(color: ColorMode | null, trace: TraceMode | null, nodeData: string | null): void;
  shown(name: string): boolean; // drawn in the scene now
  exists(name: string): Promise<boolean>; // in the graph (the server knows it)
  select(name: string): void;
  jump(name: string): Promise<void>; // open its groups, then select it
  view(v: ViewPoint): void; // pan and zoom the main pane
  warn(lines: string[]): void;
}

/**
 * Applies a Restore: the graph, its groups (a group the graph does not have is dropped, up to
 * 50, and the rest asked for again; on any other failure the first view), the compare target,
 * colour and trace modes, then the selected node, then the pan and zoom (after the selection,
 * which may have panned to it). Every part not honoured is one warning line.
 */
export async function applyRestore(r: Restore, host: RestoreHost): Promise<void> {
  const warnings = [...r.warnings];
  host.open(r.ref);
  if (r.expanded === null) await host.firstView();
  else {
    const dropped: string[] = [];
    let error: string | null = "";
    for (let i = 0; i < 50 && error !== null; i++) {
      error = await host.loadExpanded(r.expanded.filter((g) => !dropped.includes(g)));
      const gone = error === null ? null : /cannot expand (['"])(.+?)\1: no such group/.exec(error);
      if (!gone) break;
      dropped.push(gone[2]);
    }
    if (dropped.length)
      warnings.push(`The link opens ${dropped.length} group${dropped.length > 1 ? "s" : ""} this graph does not have (${dropped.slice(0, 3).join(", ")}${dropped.length > 3 ? ", …" : ""}): left closed.`);
    if (error !== null) await host.firstView();
  }
  await host.compare(r.compare);
  await host.split(r.split);
  if (r.color || r.trace || r.nodeData) host.modes(r.color, r.trace, r.nodeData);
  if (r.selected) {
    if (host.shown(r.selected)) host.select(r.selected);
    else if (await host.exists(r.selected)) await host.jump(r.selected);
    else warnings.push(`The link selects node "${r.selected}", which this graph does not have.`);
  }
  if (r.view) host.view(r.view);
  host.warn(warnings);
}
