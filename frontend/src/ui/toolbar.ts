// The toolbar: pickers (run / tag / graph type / step), upload, fit, colour mode, search, trace.
import type { CompileFacts, GraphKind, Listing, TagListing } from "../api/types";
import { COLOR_MODES } from "../render/colors";
import { clear, el, option } from "./dom";

export const KIND_LABEL: Record<GraphKind, string> = {
  op: "Op graph",
  conceptual: "Conceptual graph",
  profile: "Profile",
};

export function kindsOf(t: TagListing): GraphKind[] {
  const kinds: GraphKind[] = [];
  if (t.run_graph || t.op_graph) kinds.push("op");
  if (t.conceptual_graph) kinds.push("conceptual");
  if (t.profile) kinds.push("profile");
  return kinds;
}

/** A torch.compile call in a few words: "2 graph breaks", "no graph break, 3 recompilations". */
export function compileText(c: CompileFacts): string {
  const n = (k: number, one: string) => `${k} ${one}${k === 1 ? "" : "s"}`;
  const breaks = c.graph_breaks ? n(c.graph_breaks, "graph break") : "no graph break";
  return c.recompilations ? `${breaks}, ${n(c.recompilations, "recompilation")}` : breaks;
}

export class Toolbar {
  readonly root = el("div", { className: "gx-toolbar" });
  readonly run = el("select", { "data-picker": "run", title: "Run" });
  readonly tag = el("select", { "data-picker": "tag", title: "Tag" });
  readonly kind = el("select", { "data-picker": "kind", title: "Graph type" });
  readonly step = el("select", { "data-picker": "step", title: "Step" });
  // no `accept` filter: event files are named events.out.tfevents.<time>.<host>, no extension, and
  // any other file (.onnx, .pt2, ...) goes to the server, which recognises the format or says why not
  readonly file = el("input", { type: "file", className: "gx-hidden-file", "data-upload": "" });
  readonly uploadBtn = el("button", { text: "Upload…", title: "Open a GraphDef (.pbtxt or .pb), a PyTorch graph (.pt2, .onnx) or an event file (events.out.tfevents.*) from disk" });
  readonly fitBtn = el("button", { text: "Fit", "data-action": "fit", title: "Fit to screen (F)" });
  readonly extract = el("input", { type: "checkbox", "data-toggle": "extract", title: "Move high-degree nodes to side columns (auto-extraction)" });
  readonly kernels = el("input", { type: "checkbox", "data-toggle": "kernels",
    title: "Gather the ops each fused kernel computes (torch.compile with Inductor) into a group named by the kernel" });
  // shown only for a graph that records kernels (scene stats `kernels`)
  readonly kernelsLabel = el("label", { className: "gx-check", "data-kernels-switch": "" }, this.kernels, "group by kernel");
  readonly color = el("select", { "data-picker": "color", title: "Colour by" });
  readonly trace = el("select", { "data-picker": "trace", title: "Trace the selected node" });
  readonly query = el("input", { type: "search", placeholder: "search name, label, op (regex)", "data-search": "q", size: 20,
    title: "Regex over names, labels and op types, ignoring case ((?-i) for case). Enter: next hit, Shift+Enter: previous" });
  readonly namesOnly = el("input", { type: "checkbox", "data-toggle": "names-only", title: "Match the regex against node names only" });
  readonly pattern = el("input", { type: "checkbox", "data-toggle": "pattern",
    title: "Search a pattern of ops: steps joined by ->, each an RE2 over the op type (op:, label:, name: prefixes), * a gap of 0..3 ops, *N of 0..N" });
  readonly searchCount = el("span", { className: "gx-muted gx-count", "data-search-count": "", "aria-live": "polite" });
  readonly opQuery = el("input", { type: "search", placeholder: "op type", "data-search": "op", size: 8 });
  readonly searchBtn = el("button", { text: "Search", "data-action": "search" });

  constructor() {
    for (const m of COLOR_MODES) this.color.appendChild(option(m.id, m.label));
    for (const [v, l] of [["off", "off"], ["inputs", "inputs"], ["outputs", "outputs"], ["both", "inputs + outputs"]])
      this.trace.appendChild(option(v, l));
    this.extract.checked = true;
    this.showKernels(false);
    this.uploadBtn.addEventListener("click", () => this.file.click());
    const lab = (text: string, c: HTMLElement) => el("label", {}, text, c);
    this.root.append(
      lab("Run", this.run),
      lab("Tag", this.tag),
      lab("Graph", this.kind),
      lab("Step", this.step),
      this.uploadBtn,
      this.file,
      el("span", { className: "gx-sep" }),
      this.fitBtn,
      el("label", { className: "gx-check", title: "Auto-extract high-degree nodes to side columns" }, this.extract, "Extract"),
      this.kernelsLabel,
      lab("Colour", this.color),
      lab("Trace", this.trace),
      el("span", { className: "gx-sep" }),
      this.query,
      this.searchCount,
      el("label", { className: "gx-check", title: "Match the regex against node names only" }, this.namesOnly, "names only"),
      el("label", { className: "gx-check", title: this.pattern.title }, this.pattern, "pattern"),
      this.opQuery,
      this.searchBtn,
    );
  }

  /** The "group by kernel" switch: shown for a graph that records fused kernels. */
  showKernels(on: boolean): void {
    this.kernelsLabel.style.display = on ? "" : "none";
  }

  fillRuns(listing: Listing, run: string): void {
    clear(this.run);
    for (const r of listing.runs) {
      // a torch.compile run graph: its latest step's break count beside the run's name
      const steps = r.tags.find((t) => t.run_graph)?.steps ?? [];
      const facts = steps[steps.length - 1]?.compile;
      this.run.appendChild(option(r.run, facts ? `${r.run} · ${compileText(facts)}` : r.run, r.run === run));
    }
  }

  fillTags(tags: TagListing[], tag: string): void {
    clear(this.tag);
    for (const t of tags) this.tag.appendChild(option(t.tag, t.tag, t.tag === tag));
  }

  fillKinds(kinds: GraphKind[], kind: GraphKind): void {
    clear(this.kind);
    for (const k of kinds) this.kind.appendChild(option(k, KIND_LABEL[k], k === kind));
  }

  fillSteps(t: TagListing | undefined, step: number | null): void {
    clear(this.step);
    this.step.appendChild(option("", "latest", step === null));
    for (const s of t?.steps ?? [])
      this.step.appendChild(option(String(s.step), s.compile ? `${s.step} · ${compileText(s.compile)}` : String(s.step), s.step === step));
    this.step.disabled = !t || t.steps.length === 0;
  }
}
