// The drawing under way (the screen's, or one tile's): the context it draws on, its colours, the
// text measure and the label placer, and what every item of it uses: a node's fill and stroke,
// a text fitted into its box where it covers no other node or label. Part of render/renderer.ts.
import type { SceneNode } from "../api/types";
import type { Colorer } from "./colors";
import { FONT } from "./label_fit";
import type { PlacedLabel } from "./labels";
import type { OpLabelContext } from "./op_labels";
import type { DrawState } from "./renderer";

/** What drawing an item needs of the drawing under way (an op label's context, and more). */
export interface Paint extends OpLabelContext {
  colorer: Colorer | null;
  dark: boolean;
  /** texts are drawn: the screen's drawing, after the node boxes went into `placer` (a tile has none) */
  labels: boolean;
}

export function nodeFill(p: Paint, n: SceneNode): string {
  const c = p.colorer?.fill(n);
  if (c) return c;
  if (p.colorer && p.colorer.mode !== "none") return p.palette.unknown;
  return n.kind === "meta" || n.kind === "series" ? p.palette.metaFill : p.palette.opFill;
}

/** The outline of a pattern search's matched ops and of the closed groups holding one. */
export const MATCH_STROKE = "#d81b60";

/** Whether `n` is outlined as a pattern match: a matched op, or a closed group holding one. */
export function isMatched(n: SceneNode, st: DrawState): boolean {
  return !!st.matched?.has(n.name) && !((n.kind === "meta" || n.kind === "series") && n.expanded);
}

/** A node's outline colour and width (CSS px): the selection's, a pattern match's, the trace's, the hover's, else `base`. */
export function strokeFor(p: Pick<Paint, "palette">, n: SceneNode, st: DrawState, base: string): [string, number] {
  if (st.selected === n.name) return [p.palette.selected, 2.5];
  if (isMatched(n, st)) return [MATCH_STROKE, 2.5];
  if (st.traced?.has(n.name)) return [p.palette.traced, 2];
  if (st.hover === n.name) return [p.palette.selected, 1.2];
  return [base, 0.8];
}

/** fillText of `TextFitter.fit`'s text (aligned as the context says) where it covers no other node
 * or label; records it in the draw list. */
export function fitText(p: Paint, text: string, x: number, y: number, avail: number, fs: number, k: number, owner = "",
                        kind: PlacedLabel["kind"] = "node"): boolean {
  const fit = p.text.fit(text, avail, fs, k);
  if (!fit) return false;
  const align = p.ctx.textAlign;
  const x0 = align === "center" ? x - fit.tw / 2 : align === "right" ? x - fit.tw : x;
  const r = p.screenBox(x0, y - fit.fs / 2, x0 + fit.tw, y + fit.fs / 2);
  if (!p.placer.free(r, owner)) return false;
  p.ctx.font = `${fit.fs}px ${FONT}`;
  p.ctx.fillText(fit.t, x, y);
  p.placer.add({ text: fit.t, full: text, owner, kind, ...r, px: fit.fs * k });
  return true;
}
