// The graph pickers (run / tag / graph type / step) over the server's Listing: which graph to
// open first, the pickers shown for a GraphRef, the GraphRef a picker change asks for.
import type { GraphKind, GraphRef, Listing, TagListing } from "../api/types";
import { kindsOf, type Toolbar } from "../ui/toolbar";

export const UPLOAD_RUN = "__upload__"; // the run of uploaded graphs (tag = upload id)

export type PickerName = "run" | "tag" | "kind" | "step";

/** The graph the server names as its default, else the first (run, tag, kind) holding one; op graphs first. */
export function pickDefault(listing: Listing): GraphRef | null {
  // the server names the graph it warms up first: open that one
  const d = listing.default;
  if (d) return { run: d.run, tag: d.tag, kind: d.kind, step: d.step ?? null };
  for (const pref of ["op", "conceptual", "profile"] as GraphKind[])
    for (const r of listing.runs)
      for (const t of r.tags) if (kindsOf(t).includes(pref)) return { run: r.run, tag: t.tag, kind: pref, step: null };
  return null;
}

function tagListing(listing: Listing, run: string, tag: string): TagListing | undefined {
  return listing.runs.find((r) => r.run === run)?.tags.find((t) => t.tag === tag);
}

/** Fills the pickers with the choices around `ref`, `ref` selected. */
export function syncPickers(bar: Toolbar, listing: Listing, ref: GraphRef): void {
  bar.fillRuns(listing, ref.run);
  const run = listing.runs.find((r) => r.run === ref.run);
  bar.fillTags(run?.tags ?? [], ref.tag);
  const t = tagListing(listing, ref.run, ref.tag);
  bar.fillKinds(t ? kindsOf(t) : [ref.kind], ref.kind);
  bar.fillSteps(t, ref.step);
}

/** The graph the pickers ask for after `changed` changed (a new run/tag opens its first kind, latest step). */
export function refFromPickers(bar: Toolbar, listing: Listing, changed: PickerName): GraphRef | null {
  const run = bar.run.value;
  const tags = listing.runs.find((r) => r.run === run)?.tags ?? [];
  let t = changed === "run" ? undefined : tags.find((x) => x.tag === bar.tag.value);
  if (!t) t = tags.find((x) => kindsOf(x).length > 0);
  if (!t) return null;
  const kinds = kindsOf(t);
  let kind = bar.kind.value as GraphKind;
  if (changed === "run" || changed === "tag" || !kinds.includes(kind)) kind = kinds[0];
  const step = changed === "step" && bar.step.value !== "" ? Number(bar.step.value) : null;
  return { run, tag: t.tag, kind, step };
}
