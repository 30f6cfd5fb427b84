// The info pane: a NodeDetails shown as text, inputs/outputs as links that jump to the node.
import type { NodeDetails, NodeIo } from "../api/types";
import { fmtBytes, fmtTime } from "../render/colors";
import { clear, el } from "./dom";

export interface InfoActions {
  jump(name: string): void;
  toggleHidden(name: string): void;
  isHidden(name: string): boolean;
  toggleExpand(name: string): void;
  isGroup(name: string): boolean;
  isExpanded(name: string): boolean;
  trace(name: string): void;
  ungroup(series: string): void;
  /** the torch.compile graph breaks in the graph shown (scene stats `graph_breaks`) */
  graphBreaks(): number;
}

function kv(rows: [string, string | null | undefined][]): HTMLElement {
  const box = el("div", { className: "gx-kv" });
  for (const [k, v] of rows) {
    if (v === null || v === undefined || v === "") continue;
    box.appendChild(el("span", { text: k }));
    box.appendChild(el("span", { text: v }));
  }
  return box;
}

function ioList(title: string, items: NodeIo[], act: InfoActions): HTMLElement {
  const sec = el("section", { "data-io": title.toLowerCase() }, el("h3", { text: `${title} (${items.length})` }));
  const ul = el("ul", { className: "gx-list" });
  for (const io of items.slice(0, 500)) {
    const link = el("button", { className: "gx-link", text: io.name, title: io.name, "data-jump": io.name });
    link.addEventListener("click", () => act.jump(io.name));
    const edges = io.count !== undefined && io.count > 1 ? `${io.count} edges` : null; // a group's MetaEdge
    const extra = [shapeText(io.shape), edges, io.kind && io.kind !== "data" ? io.kind : null].filter(Boolean).join(", ");
    ul.appendChild(el("li", {}, link, extra ? el("span", { className: "gx-muted", text: ` ${extra}` }) : null));
  }
  if (items.length > 500) ul.appendChild(el("li", { className: "gx-muted", text: `… ${items.length - 500} more` }));
  sec.appendChild(ul);
  return sec;
}

export function shapeText(shape: NodeIo["shape"]): string | null {
  if (shape === null || shape === undefined) return null;
  if (typeof shape === "string") return shape;
  if (!Array.isArray(shape)) return String(shape);
  return shape.length === 0 ? "scalar" : shape.map((d) => (d < 0 ? "?" : String(d))).join("×");
}

function statText(v: unknown, key: string): string {
  if (typeof v === "number") {
    if (/time|micros|_us$/.test(key)) return fmtTime(v);
    if (/mem|bytes/.test(key)) return fmtBytes(v);
  }
  return typeof v === "string" ? v : JSON.stringify(v);
}

export function renderInfo(box: HTMLElement, d: NodeDetails, act: InfoActions): void {
  clear(box);
  box.appendChild(el("h3", { text: "Node" }));
  box.appendChild(el("div", { className: "gx-name", text: d.name, "data-node-name": d.name }));
  box.appendChild(
    kv([
      ["kind", d.kind],
      ["op", d.op],
      ["device", d.device],
      ["ops inside", d.kind === "meta" || d.kind === "series" || d.cardinality > 1 ? String(d.cardinality) : null],
      ["series", d.series],
      ["template", d.template],
      ["graph breaks", d.op === "graph_break" ? `${act.graphBreaks()} in this graph (search graph_break to step through them)` : null],
      ["grouped by", d.inferred === "name" ? "indices in its layers' names (inferred)"
        : d.inferred === "dataflow" ? "dataflow: a region between two cut points (inferred)"
        : d.inferred === "source" ? "source: the ops one function call computes (from the stack trace)"
        : d.inferred === "library" ? "library: the graph's library functions (definitions, called by ops)"
        : d.inferred === "kernel" ? "kernel: the ops torch.compile's Inductor fused into this one kernel" : null],
    ]),
  );
  if (d.stats && Object.keys(d.stats).length) {
    const sec = el("section", {}, el("h3", { text: "Profile" }));
    sec.appendChild(kv(Object.entries(d.stats).map(([k, v]) => [k, statText(v, k)])));
    box.appendChild(sec);
  }
  const actions = el("div", { className: "gx-actions" });
  if (act.isGroup(d.name)) {
    const b = el("button", { text: act.isExpanded(d.name) ? "Collapse" : "Expand", "data-action": "expand" });
    b.addEventListener("click", () => act.toggleExpand(d.name));
    actions.appendChild(b);
  }
  if (d.kind === "series") {
    const u = el("button", { text: "Ungroup series", "data-action": "ungroup", title: "Show the members of this series one by one" });
    u.addEventListener("click", () => act.ungroup(d.name));
    actions.appendChild(u);
  }
  const tr = el("button", { text: "Trace inputs", "data-action": "trace" });
  tr.addEventListener("click", () => act.trace(d.name));
  actions.appendChild(tr);
  const hide = el("button", {
    text: act.isHidden(d.name) ? "Add back to main graph" : "Remove from main graph",
    "data-action": "hide",
  });
  hide.addEventListener("click", () => act.toggleHidden(d.name));
  actions.appendChild(hide);
  box.appendChild(actions);
  if (d.attrs.length) {
    const sec = el("section", {}, el("h3", { text: `Attributes (${d.attrs.length})` }));
    sec.appendChild(
      kv(
        d.attrs.map((a) => [
          a.key,
          a.elided_bytes !== undefined ? `… ${a.elided_bytes} bytes elided` : typeof a.value === "string" ? a.value : JSON.stringify(a.value),
        ]),
      ),
    );
    box.appendChild(sec);
  }
  box.appendChild(ioList("Inputs", d.inputs, act));
  box.appendChild(ioList("Outputs", d.outputs, act));
}
