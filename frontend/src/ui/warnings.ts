// The graph's warnings in one line above the canvas: inputs naming missing nodes, duplicate
// node names, profile stats that matched no node, torch.compile graph breaks, edges reversed to
// break cycles. Read from
// scene.stats (filled by the server's scene task) and the scene's edges. For an uploaded graph
// the line also says what the upload opened (UploadAnswer.source) and what the server skipped
// reading it (UploadAnswer.warnings: an event file's corrupt records, ...). Text only.
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
  const breaks = num(st.graph_breaks);
  if (breaks) out.push({ text: `${plural(breaks, "torch.compile graph break", "torch.compile graph breaks")} (search graph_break)`, detail: "" });
  const reversed = model.reversedEdges;
  if (reversed) out.push({ text: `${plural(reversed, "edge drawn reversed", "edges drawn reversed")} to break cycles`, detail: "" });
  return out;
}

/** What the server said about an upload, kept while that uploaded graph is shown. */
export interface UploadNote {
  filename: string;
  source: string; // UploadAnswer.source: "graph file", "run graph (step 5)", ...
  warnings: string[]; // UploadAnswer.warnings
}

const MAX_UPLOAD_WARNINGS = 3;

export function renderWarnings(box: HTMLElement, model: SceneModel | null, upload: UploadNote | null = null): void {
  clear(box);
  const ws = sceneWarnings(model);
  const uw = upload?.warnings ?? [];
  const d = document.body.dataset;
  d.warningCount = String(ws.length);
  d.uploadWarningCount = String(uw.length);
  d.uploadSource = upload?.source ?? "";
  box.classList.toggle("gx-on", ws.length + uw.length > 0 || !!upload);
  box.classList.toggle("gx-info", ws.length + uw.length === 0); // only what was opened: no alarm colours
  if (!ws.length && !uw.length && !upload) return;
  if (ws.length || uw.length) box.appendChild(el("span", { className: "gx-warn-icon", text: "⚠" }));
  const sep = () => box.appendChild(el("span", { className: "gx-muted", text: " · " }));
  let first = true;
  const item = (text: string, title: string, attr: string) => {
    if (!first) sep();
    first = false;
    box.appendChild(el("span", { text, title, [attr]: "" }));
  };
  if (upload) item(`uploaded ${upload.filename}: ${upload.source}`, `uploaded ${upload.filename}; opened its ${upload.source}`, "data-upload-info");
  uw.slice(0, MAX_UPLOAD_WARNINGS).forEach((w) => item(w, w, "data-upload-warning"));
  if (uw.length > MAX_UPLOAD_WARNINGS) {
    const rest = uw.slice(MAX_UPLOAD_WARNINGS);
    item(`${plural(rest.length, "more upload warning", "more upload warnings")}`, rest.join("\n"), "data-upload-warning-more");
  }
  ws.forEach((w) => item(w.text, w.detail || w.text, "data-warning"));
}
