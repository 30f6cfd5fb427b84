// Per-graph choices kept in the browser (localStorage): nodes removed from the main graph,
// SeriesNodes shown ungrouped, auto-extraction on/off. Storage may be disabled: then the
// choices last for the page only.
import type { ViewOptions } from "../api/client";
import type { GraphRef } from "../api/types";

export interface GraphPrefs {
  hidden: Set<string>;
  view: ViewOptions;
}

const key = (what: string, ref: GraphRef) => `graph_explorer.${what}.${JSON.stringify([ref.run, ref.tag, ref.kind])}`;

function read(k: string): unknown {
  try {
    const raw = window.localStorage.getItem(k);
    return raw ? JSON.parse(raw) : null;
  } catch {
    return null;
  }
}

function write(k: string, value: unknown): void {
  try {
    window.localStorage.setItem(k, JSON.stringify(value));
  } catch {
    /* storage disabled */
  }
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);

export function loadPrefs(ref: GraphRef): GraphPrefs {
  const extract = read(key("extract", ref));
  return {
    hidden: new Set(strings(read(key("hidden", ref)))),
    view: { extract: extract !== false, ungroup: strings(read(key("ungroup", ref))), kernels: read(key("kernels", ref)) === true },
  };
}

export function savePrefs(ref: GraphRef, prefs: GraphPrefs): void {
  write(key("hidden", ref), [...prefs.hidden]);
  write(key("ungroup", ref), prefs.view.ungroup);
  write(key("extract", ref), prefs.view.extract);
  write(key("kernels", ref), !!prefs.view.kernels);
}
