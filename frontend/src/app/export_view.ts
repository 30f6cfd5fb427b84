// Export the view: "SVG" and "PNG" downloads of the scene the canvas draws, as it is
// drawn: the open groups, the colour mode's fills (Colorer, as the renderer uses it), the
// selection and traced nodes outlined, nodes removed from the main graph left out. The whole
// scene is exported, not only the part on screen. The SVG is SVG 1.1, self-contained (inline
// styles; its only references are to its own arrow marker), every graph text XML-escaped; the
// PNG is that SVG drawn on a canvas (at most 8192 px a side). The font is embedded: the plugin
// serves static/export-font.woff (DejaVu Sans Condensed, Latin-1 subset, 13 kB: Arial's widths
// within 2%, see frontend/fonts/make_export_font.py), put in a data: @font-face, so the file
// looks the same wherever it is opened and still references nothing outside itself.
import type { SceneEdge, SceneNode } from "../api/types";
import type { Colorer, Palette } from "../render/colors";
import type { SceneModel } from "../render/model";
import { MATCH_STROKE } from "../render/paint";

const EMBEDDED = "GX Export";
const FONT = `'${EMBEDDED}', Roboto, 'Helvetica Neue', Arial, sans-serif`;
const FONT_PATH = "static/export-font.woff";
let fontCss: Promise<string> | null = null;

/** The `@font-face` rule embedding the export font (fetched once from the plugin). */
export function embeddedFontCss(base: string = document.baseURI): Promise<string> {
  if (!fontCss) {
    fontCss = fetch(new URL(FONT_PATH, base).href)
      .then((r) => {
        if (!r.ok) throw new Error(`export font: HTTP ${r.status}`);
        return r.arrayBuffer();
      })
      .then((buf) => {
        const bytes = new Uint8Array(buf);
        let bin = "";
        for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
        return `@font-face{font-family:'${EMBEDDED}';src:url(data:font/woff;base64,${btoa(bin)}) format('woff');}`;
      });
    fontCss.catch(() => { fontCss = null; }); // a failed fetch is retried at the next export
  }
  return fontCss;
}
const MAX_PNG_SIDE = 8192;
const MARGIN = 12;

export interface ViewState {
  selected: string | null;
  traced: Set<string> | null;
  hidden: Set<string>;
  matched?: Set<string> | null; // a pattern search's matches (render/paint.ts: isMatched)
}

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");
}

const f = (v: number) => (Math.round(v * 100) / 100).toString();
const isGroup = (n: SceneNode) => n.kind === "meta" || n.kind === "series";

function fillOf(n: SceneNode, colorer: Colorer | null, pal: Palette): string {
  const c = colorer?.fill(n);
  if (c) return c;
  if (colorer && colorer.mode !== "none") return pal.unknown;
  return isGroup(n) ? pal.metaFill : pal.opFill;
}

function strokeOf(n: SceneNode, st: ViewState, pal: Palette): [string, number] {
  if (st.selected === n.name) return [pal.selected, 2.5];
  if (st.matched?.has(n.name) && !(isGroup(n) && n.expanded)) return [MATCH_STROKE, 2.5];
  if (st.traced?.has(n.name)) return [pal.traced, 2];
  return [isGroup(n) ? pal.metaStroke : pal.opStroke, 0.8];
}

/** The SVG 1.1 document of the scene as drawn (see the module comment). */
export function sceneToSvg(model: SceneModel, colorer: Colorer | null, pal: Palette, st: ViewState,
  font = ""): string {
  const b = model.bounds;
  const x0 = b.x0 - MARGIN, y0 = b.y0 - MARGIN;
  const w = b.x1 - b.x0 + 2 * MARGIN, h = b.y1 - b.y0 + 2 * MARGIN;
  const g = model.scene.graph;
  const out: string[] = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${f(w)}" height="${f(h)}" viewBox="${f(x0)} ${f(y0)} ${f(w)} ${f(h)}" font-family="${esc(FONT)}">`,
    ...(font ? [`<defs><style type="text/css"><![CDATA[${font}]]></style></defs>`] : []),
    `<title>${esc(`${g.run} / ${g.tag} (${g.kind}${g.step === null ? "" : `, step ${g.step}`})`)}</title>`,
    `<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="5" markerHeight="5" markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="${pal.edge}"/></marker></defs>`,
    `<rect x="${f(x0)}" y="${f(y0)}" width="${f(w)}" height="${f(h)}" fill="${pal.background}"/>`,
  ];
  const hidden = (name: string) => st.hidden.has(name);
  const order = model.nodes.map((_, i) => i).sort((a, c) => model.depth[a] - model.depth[c] || Number(model.nodes[c].expanded) - Number(model.nodes[a].expanded));
  const node = (n: SceneNode) => {
    const [stroke, lw] = strokeOf(n, st, pal);
    const x = n.x - n.width / 2, y = n.y - n.height / 2;
    const title = `<title>${esc(n.name)}${n.op ? ` (${esc(n.op)})` : ""}</title>`;
    const dash = n.inferred ? ' stroke-dasharray="5,3"' : "";
    const attrs = `class="node ${n.kind}" data-name="${esc(n.name)}"`;
    if (n.expanded) {
      const fill = colorer?.fill(n);
      return `<g ${attrs}>${title}<rect x="${f(x)}" y="${f(y)}" width="${f(n.width)}" height="${f(n.height)}" rx="${f(Math.min(6, n.height / 4))}" fill="${pal.expandedFill}" stroke="${stroke}" stroke-width="${lw}"${dash}/>`
        + (fill ? `<rect x="${f(x)}" y="${f(y)}" width="${f(n.width)}" height="${f(n.height)}" rx="${f(Math.min(6, n.height / 4))}" fill="${fill}" fill-opacity="0.25"/>` : "")
        + `<text x="${f(x + 6)}" y="${f(y + 12)}" font-size="10" fill="${pal.mutedText}">${esc(n.label)}</text></g>`;
    }
    const fill = fillOf(n, colorer, pal);
    if (isGroup(n)) {
      // the count only where the label leaves room for it (SVG text is never cut, unlike the canvas's)
      const room = n.width - 13 - 5.8 * n.label.length - 6 * String(n.cardinality).length;
      const card = n.cardinality > 1 && room > 0 ? `<text x="${f(x + n.width - 5)}" y="${f(n.y + 3.5)}" font-size="9" text-anchor="end" fill="${pal.mutedText}">${n.cardinality}</text>` : "";
      return `<g ${attrs}>${title}<rect x="${f(x)}" y="${f(y)}" width="${f(n.width)}" height="${f(n.height)}" rx="${f(Math.min(5, n.height / 2))}" fill="${fill}" stroke="${stroke}" stroke-width="${lw}"${dash}/>`
        + `<text x="${f(x + 8)}" y="${f(n.y + 3.5)}" font-size="10" fill="${pal.text}">${esc(n.label)}</text>${card}</g>`;
    }
    const shape = n.kind === "bridge" || n.kind === "stub"
      ? `<rect x="${f(x)}" y="${f(y)}" width="${f(n.width)}" height="${f(n.height)}" fill="${pal.unknown}" stroke="${stroke}" stroke-width="${lw}"/>`
      : `<ellipse cx="${f(n.x)}" cy="${f(n.y)}" rx="${f(n.width / 2)}" ry="${f(n.height / 2)}" fill="${fill}" stroke="${stroke}" stroke-width="${lw}"/>`;
    const label = n.kind === "bridge" ? "" : `<text x="${f(n.x + n.width / 2 + 2)}" y="${f(n.y + 2.5)}" font-size="7" fill="${pal.text}">${esc(n.label)}</text>`;
    return `<g ${attrs}>${title}${shape}${label}</g>`;
  };
  for (const i of order) {
    const n = model.nodes[i];
    if (n.expanded && !hidden(n.name)) out.push(node(n));
  }
  const edge = (e: SceneEdge) => {
    const pts = e.points.map(([x, y]) => `${f(x)},${f(y)}`).join(" ");
    const dash = e.kind === "control" ? ' stroke-dasharray="2,2"' : e.reversed ? ' stroke-dasharray="7,3"' : "";
    const color = e.reversed ? pal.reversedEdge : pal.edge;
    const label = e.label && e.points.length >= 2
      ? `<text x="${f(e.points[Math.floor(e.points.length / 2)][0] + 3)}" y="${f(e.points[Math.floor(e.points.length / 2)][1])}" font-size="8" fill="${pal.edgeLabel}">${esc(e.label)}</text>` : "";
    return `<g class="edge ${e.kind}"><title>${esc(e.source)} → ${esc(e.target)}</title><polyline points="${pts}" fill="none" stroke="${color}" stroke-width="${f(e.width)}"${dash} marker-end="url(#arrow)"/>${label}</g>`;
  };
  for (const e of model.edges) if (e.points.length >= 2 && !hidden(e.source) && !hidden(e.target)) out.push(edge(e));
  for (const i of order) {
    const n = model.nodes[i];
    if (!n.expanded && !hidden(n.name)) out.push(node(n));
  }
  out.push("</svg>");
  return out.join("\n") + "\n";
}

function fileBase(model: SceneModel): string {
  const g = model.scene.graph;
  return `${g.run}_${g.tag}${g.step === null ? "" : `_step${g.step}`}`.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 80) || "graph";
}

function download(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 10000);
}

export function downloadSvg(model: SceneModel, svg: string): void {
  download(new Blob([svg], { type: "image/svg+xml" }), `${fileBase(model)}.svg`);
  document.body.dataset.exported = "svg";
}

/** The SVG drawn on a canvas at `scale` (capped so no side passes 8192 px), as a PNG download. */
export async function downloadPng(model: SceneModel, svg: string, scale = 2): Promise<void> {
  const b = model.bounds;
  const w = b.x1 - b.x0 + 2 * MARGIN, h = b.y1 - b.y0 + 2 * MARGIN;
  const s = Math.min(scale, MAX_PNG_SIDE / w, MAX_PNG_SIDE / h);
  const img = new Image();
  const url = URL.createObjectURL(new Blob([svg], { type: "image/svg+xml" }));
  try {
    await new Promise<void>((resolve, reject) => {
      img.onload = () => resolve();
      img.onerror = () => reject(new Error("the SVG of the view could not be drawn"));
      img.src = url;
    });
    const canvas = document.createElement("canvas");
    canvas.width = Math.max(1, Math.round(w * s));
    canvas.height = Math.max(1, Math.round(h * s));
    canvas.getContext("2d")!.drawImage(img, 0, 0, canvas.width, canvas.height);
    const blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, "image/png"));
    if (!blob) throw new Error("the PNG could not be encoded (view too large?)");
    download(blob, `${fileBase(model)}.png`);
    document.body.dataset.exported = "png";
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** Downloads the whole view (open groups, colours, selection) as SVG or PNG; failures go to `showError`. */
export function exportView(format: "svg" | "png", model: SceneModel, colorer: Colorer | null, pal: Palette, st: ViewState,
                           showError: (message: string) => void): void {
  embeddedFontCss()
    .catch((e) => {
      showError(`${(e as Error).message}: exported without its font`);
      return "";
    })
    .then((font) => {
      const svg = sceneToSvg(model, colorer, pal, st, font);
      if (format === "svg") downloadSvg(model, svg);
      else return downloadPng(model, svg);
    })
    .catch((e) => showError(`PNG export failed: ${(e as Error).message}`));
}
