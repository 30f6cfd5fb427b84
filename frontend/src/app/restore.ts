// Restoring a deep link (issue 13): the LinkState read from the URL checked against the
// server's Listing, giving the closest valid view and a warning for each part that could not
// be honoured (unknown run, tag, graph type or step; unknown colour or trace mode; compare
// target gone). The groups and the selected node are checked later, against the graph itself
// (App: the server refuses a group that is not in the graph; the node is looked up).
import type { GraphKind, GraphRef, Listing } from "../api/types";
import { COLOR_MODES, type ColorMode } from "../render/colors";
import { kindsOf } from "../ui/toolbar";
import { refFromKey } from "./compare";
import type { LinkState } from "./deep_link";
import type { TraceMode } from "./trace";

const TRACE_MODES: TraceMode[] = ["off", "inputs", "outputs", "both"];

export interface Restore {
  ref: GraphRef;
  expanded: string[] | null; // null: the server's first view
  selected: string | null;
  color: ColorMode | null;
  trace: TraceMode | null;
  compare: GraphRef | null;
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
  if (link.color) {
    if (COLOR_MODES.some((m) => m.id === link.color)) color = link.color as ColorMode;
    else warn(`Unknown colour mode "${link.color}" in the link: colours off.`);
  }
  let trace: TraceMode | null = null;
  if (link.trace) {
    if ((TRACE_MODES as string[]).includes(link.trace)) trace = link.trace as TraceMode;
    else warn(`Unknown trace mode "${link.trace}" in the link: trace off.`);
  }
  let compare: GraphRef | null = null;
  if (link.compare) {
    const c = refFromKey(link.compare);
    const known = c && listing.runs.find((r) => r.run === c.run)?.tags.find((t) => t.tag === c.tag && kindsOf(t).includes(c.kind));
    if (c && known && (c.step === null || known.steps.some((s) => s.step === c.step))) compare = c;
    else warn(`The graph to compare with (${link.compare}) is not in this TensorBoard: not comparing.`);
  }
  return {
    ref,
    // groups and selection only mean something in the graph the link named
    expanded: sameGraph && link.expanded ? link.expanded : null,
    selected: sameGraph && link.selected ? link.selected : null,
    color,
    trace,
    compare,
    warnings,
  };
}
