// The legend over the canvas: the colour mode's entries, plus the edge styles that need
// explaining in this scene (reversed edges of cycles). Text only.
import type { Colorer, Palette } from "../render/colors";
import { MATCH_STROKE } from "../render/paint";
import type { SceneModel } from "../render/model";
import { clear, el } from "../ui/dom";
import type { Corner } from "./navigation";

/** The legend `box`'s extent from its canvas's bottom-left corner ([width, height], CSS px), or
 * null while it is hidden: what a fit keeps nodes out of (app/navigation.ts: fitClear). */
export function legendCorner(box: HTMLElement): Corner {
  const stage = box.offsetParent as HTMLElement | null;
  if (!box.classList.contains("gx-on") || !stage) return null;
  return [box.offsetLeft + box.offsetWidth, stage.clientHeight - box.offsetTop];
}

/** Fills `box`; the counts go to `data` (the page's body for the main view's legend). */
export function renderLegend(box: HTMLElement, colorer: Colorer, model: SceneModel | null, pal: Palette,
                             data: DOMStringMap = document.body.dataset, matched = false): void {
  const entries = colorer.legend();
  clear(box);
  for (const e of entries) {
    const sw = el("span", { className: e.gradient ? "gx-grad" : "gx-swatch" });
    sw.style.background = e.gradient ? `linear-gradient(to right, ${e.gradient[0]}, ${e.gradient[1]})` : e.color;
    box.appendChild(el("div", {}, sw, el("span", { text: e.label, title: e.label })));
  }
  let edgeEntries = 0;
  if (model?.reversedEdges) {
    const sw = el("span", { className: "gx-edge-swatch" });
    sw.style.borderTop = `2px dashed ${pal.reversedEdge}`;
    box.appendChild(el("div", { "data-legend-edge": "reversed" }, sw, el("span", { text: "edge reversed to break a cycle" })));
    edgeEntries++;
  }
  if (model?.inferredNodes) {
    const sw = el("span", { className: "gx-edge-swatch" });
    sw.style.borderTop = `2px dashed ${pal.metaStroke}`;
    box.appendChild(el("div", { "data-legend-node": "inferred" }, sw,
      el("span", { text: "dashed box: inferred group",
                   title: "a group not in the graph's own scopes: inferred from names, dataflow or calls, or library functions gathered" })));
    edgeEntries++;
  }
  if (matched) {
    const sw = el("span", { className: "gx-swatch" });
    sw.style.background = "transparent";
    sw.style.border = `2px solid ${MATCH_STROKE}`;
    box.appendChild(el("div", { "data-legend-node": "matched" }, sw,
      el("span", { text: "outlined: a pattern match (or a closed group holding one)" })));
    edgeEntries++;
  }
  box.classList.toggle("gx-on", entries.length + edgeEntries > 0);
  data.legendEntries = String(entries.length);
  data.legendEdgeEntries = String(edgeEntries);
}
