// What a node costs (parameters, FLOPs, output bytes), in human units: the info pane's "Cost"
// section (asked of /node with cost=on after the details show: the first cost of a graph reads
// every op on the server) and the built-in colour modes' labels and values ("Cost: FLOPs", run
// `__cost__` of /node_data). Text only.
import * as api from "../api/client";
import type { GraphRef, NodeCost } from "../api/types";
import { fmtBytes } from "../render/colors";
import { el } from "../ui/dom";

/** The pseudo-run of the built-in cost colour modes (metadata.COST_RUN on the server). */
export const COST_RUN = "__cost__";
const LABELS: Record<string, string> = { params: "params", flops: "FLOPs", output_bytes: "output bytes" };

/** "Cost: FLOPs" for a built-in cost tag. */
export function costLabel(tag: string): string {
  return `Cost: ${LABELS[tag] ?? tag}`;
}

/** 7.1 M, 2.3 G: a count with an SI prefix (3 significant digits). */
export function fmtCount(v: number): string {
  const units = ["", " k", " M", " G", " T", " P", " E"];
  let i = 0;
  let x = Math.abs(v);
  while (x >= 1000 && i < units.length - 1) {
    x /= 1000;
    i++;
  }
  const s = i === 0 ? String(Math.round(x)) : x.toPrecision(x >= 100 ? 3 : 2);
  return `${v < 0 ? "-" : ""}${s}${units[i]}`;
}

/** A cost tag's value in its unit: "7.1 M params", "2.3 GFLOPs", "1.5 MB". */
export function fmtCost(tag: string, v: number): string {
  if (tag === "flops") return /\d$/.test(fmtCount(v)) ? `${fmtCount(v)} FLOPs` : `${fmtCount(v)}FLOPs`;
  if (tag === "output_bytes" || tag === "param_bytes") return fmtBytes(v);
  return `${fmtCount(v)} params`;
}

function costRows(c: NodeCost): [string, string][] {
  const rows: [string, string][] = [
    ["params", `${fmtCount(c.params)} (${fmtBytes(c.param_bytes)})`],
    ["FLOPs", fmtCost("flops", c.flops)],
    ["output bytes", fmtBytes(c.output_bytes)],
  ];
  if (c.unknown_ops) {
    const types = Object.entries(c.unknown_op_types).map(([t, n]) => `${t || "(no op type)"} ×${n}`).join(", ");
    rows.push(["unknown ops", `${c.unknown_ops}: ${types} (their FLOPs and bytes not counted)`]);
  }
  return rows;
}

/** Appends the node's "Cost" section to the info pane `box` (after its details), unless the
 * selection moved on meanwhile. */
export async function appendCost(box: HTMLElement, ref: GraphRef, view: api.ViewOptions, name: string,
  still: () => boolean): Promise<void> {
  let cost: NodeCost | undefined;
  try {
    cost = (await api.fetchNode(ref, name, view, true)).cost;
  } catch (e) {
    if (still()) box.appendChild(el("div", { className: "gx-error gx-on", text: `cost: ${(e as Error).message}` }));
    return;
  }
  if (!still() || !cost) return;
  for (const old of box.querySelectorAll("[data-cost]")) old.remove();
  const sec = el("section", { "data-cost": name }, el("h3", { text: "Cost" }));
  const kv = el("div", { className: "gx-kv" });
  for (const [k, v] of costRows(cost)) kv.append(el("span", { text: k }), el("span", { text: v, "data-cost-field": k }));
  sec.appendChild(kv);
  const io = box.querySelector("[data-io]");
  box.insertBefore(sec, io); // above the inputs and outputs
}
