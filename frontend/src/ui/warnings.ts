// The graph's warnings in one line above the canvas: inputs naming missing nodes, duplicate
// node names, profile stats that matched no node, edges reversed to break cycles. Read from
// scene.stats (filled by the server's scene task) and the scene's edges. Text only.
import type { SceneModel } from "../render/model";
import { clear, el } from "./dom";

const num = (v: unknown): number => (typeof v === "number" && isFinite(v) ? v : 0);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => String(x)) : []);
const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function examples(list: string[], total: number): string {
  if (!list.length) return "";
  const shown = list.slice(0, 3).join(", ");
  return ` (${shown}${total > 3 ? ", …" : ""})`;
}

/** The warning texts of a scene, most important first; [] when the graph is clean. */
export function sceneWarnings(model: SceneModel | null): { text: string; detail: string }[] {
  if (!model) return [];
  const st = model.scene.stats ?? {};
  const out: { text: string; detail: string }[] = [];
  const dangling = num(st.dangling_inputs);
  if (dangling) {
    const ex = strs(st.dangling_examples);
    out.push({ text: `${plural(dangling, "input names a missing node", "inputs name missing nodes")}${examples(ex, dangling)}`, detail: ex.join("\n") });
  }
  const dups = strs(st.duplicate_names);
  const nDups = Math.max(dups.length, num(st.duplicate_name_count));
  if (nDups) out.push({ text: `${plural(nDups, "duplicate node name", "duplicate node names")} (first kept)${examples(dups, nDups)}`, detail: dups.join("\n") });
  const unmatched = num(st.unmatched_step_stats);
  if (unmatched) out.push({ text: `${plural(unmatched, "profile entry matches", "profile entries match")} no node`, detail: "" });
  let reversed = 0;
  for (const e of model.edges) if ((e as { reversed?: boolean }).reversed) reversed++;
  if (reversed) out.push({ text: `${plural(reversed, "edge drawn reversed", "edges drawn reversed")} to break cycles`, detail: "" });
  return out;
}

export function renderWarnings(box: HTMLElement, model: SceneModel | null): void {
  clear(box);
  const ws = sceneWarnings(model);
  box.classList.toggle("gx-on", ws.length > 0);
  document.body.dataset.warningCount = String(ws.length);
  if (!ws.length) return;
  box.appendChild(el("span", { className: "gx-warn-icon", text: "⚠" }));
  ws.forEach((w, i) => {
    if (i) box.appendChild(el("span", { className: "gx-muted", text: " · " }));
    box.appendChild(el("span", { text: w.text, title: w.detail || w.text, "data-warning": "" }));
  });
}
