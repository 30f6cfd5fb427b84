// An op's label beside its ellipse (an op's ellipse is too small for text), placed where it
// covers no other node or label. Part of render/item_draw.ts's drawing of the nodes.
import type { SceneNode } from "../api/types";
import type { Palette } from "./colors";
import { FONT, type TextFitter } from "./label_fit";
import type { LabelPlacer } from "./labels";

export const OP_LABEL_PX = 7; // world px of an op's label, drawn beside its ellipse
export const MIN_LABEL_PX = 7; // smallest on-screen font size worth drawing
const OP_LABEL_MAX_W = 90; // world px; longer op labels end in an ellipsis
const STUB_HEIGHT = 15; // world px of a stub's pill (SceneOptions.stub_height)

/** What placing a label needs of the drawing under way. */
export interface OpLabelContext {
  ctx: CanvasRenderingContext2D;
  text: TextFitter;
  placer: LabelPlacer;
  palette: Palette;
  /** world box -> screen CSS px box under the drawing's view */
  screenBox(x0: number, y0: number, x1: number, y1: number): { x0: number; y0: number; x1: number; y1: number };
}

/** An op's ellipse is too small for text: its label goes beside it, as in the stock tab (right,
 * else left, above, below: the first spot that covers no other node or label), cut so that it
 * stays inside the op's expanded parent box; no free spot: not drawn. */
export function drawOpLabel(c: OpLabelContext, n: SceneNode, k: number, parent?: SceneNode): number {
  if (OP_LABEL_PX * k < MIN_LABEL_PX) return 0;
  const ctx = c.ctx;
  const fs0 = OP_LABEL_PX;
  const px0 = parent ? parent.x - parent.width / 2 + 2 : -Infinity, px1 = parent ? parent.x + parent.width / 2 - 2 : Infinity;
  const py0 = parent ? parent.y - parent.height / 2 : -Infinity, py1 = parent ? parent.y + parent.height / 2 : Infinity;
  const text = n.label;
  const right = n.x + n.width / 2 + 2, left = n.x - n.width / 2 - 2;
  const spots: [number, number, number][] = [ // [left x of the text box, centre y, room]
    [right, n.y, Math.min(OP_LABEL_MAX_W, px1 - right)],
    [NaN, n.y, Math.min(OP_LABEL_MAX_W, left - px0)], // right-aligned at `left`
    [NaN, n.y - n.height / 2 - fs0 / 2 - 1, Math.min(OP_LABEL_MAX_W, px1 - px0)],
    [NaN, n.y + n.height / 2 + fs0 / 2 + 1, Math.min(OP_LABEL_MAX_W, px1 - px0)],
    // above and below clear of the labelled stub pills beside it (STUB_HEIGHT: an op between
    // its input and output stubs had no free spot, issue 40)
    [NaN, n.y - STUB_HEIGHT / 2 - fs0 / 2 - 1, Math.min(OP_LABEL_MAX_W, px1 - px0)],
    [NaN, n.y + STUB_HEIGHT / 2 + fs0 / 2 + 1, Math.min(OP_LABEL_MAX_W, px1 - px0)],
  ];
  for (let s = 0; s < spots.length; s++) {
    const [sx, cy, room] = spots[s];
    const fit = c.text.fit(text, room, fs0, k);
    if (!fit) continue;
    const x0 = s === 0 ? sx : s === 1 ? left - fit.tw : Math.max(px0, Math.min(px1 - fit.tw, n.x - fit.tw / 2));
    if (cy - fit.fs / 2 < py0 || cy + fit.fs / 2 > py1) continue;
    const r = c.screenBox(x0, cy - fit.fs / 2, x0 + fit.tw, cy + fit.fs / 2);
    if (!c.placer.free(r, n.name)) continue;
    ctx.font = `${fit.fs}px ${FONT}`;
    ctx.fillStyle = c.palette.text;
    ctx.textBaseline = "middle";
    ctx.textAlign = "left";
    ctx.fillText(fit.t, x0, cy);
    c.placer.add({ text: fit.t, full: n.label, owner: n.name, kind: "op", ...r, px: fit.fs * k });
    return 1;
  }
  return 0;
}
