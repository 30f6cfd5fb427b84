// Fitting a label into the room its node gives it: measured once per text (a cache of widths at
// 10 px), shrunk a little, then cut. A cut keeps what tells siblings apart: a PyTorch
// `Type[attribute]` puts its attribute first and cuts the type (`embeddings · BertEmbed…`, the
// attribute alone when even that does not fit; labels.ts: attributeParts), and a long name whose
// last part carries an index is cut in the middle (`convnext_tiny_stage_0` -> `conv…stage_0`,
// `ƒ _conv_xla_2572` -> `ƒ _co…xla_2572`): Keras prefixes every layer with the model's name and
// TensorFlow suffixes every function with a number, so cut at the end they all read the same.
// Any other label is cut at the end. The full label stays in the tooltip and the info pane.
import { attributeParts } from "./labels";

/** The smallest on-screen size a first view shows every label at (every node of a first view named). */
export const READABLE_LABEL_PX = 9;
/** The label font (canvas CSS), shared with the renderer. */
export const FONT = "Roboto, 'Helvetica Neue', Arial, sans-serif";
const SEPARATORS = /[_/.\-: ]/;

export interface Fit {
  t: string;
  tw: number;
  fs: number;
}

/**
 * The part of `text` a middle cut keeps: the shortest run of its last name parts that holds a
 * digit and a word of 3 letters (`stage_0`, `block_0_1`, `xla_2572`); null when there is none or
 * it leaves a head of fewer than 3 characters.
 */
export function distinguishingTail(text: string): string | null {
  for (let at = lastSeparator(text, text.length); at >= 3; at = lastSeparator(text, at)) {
    const tail = text.slice(at + 1);
    if (/\d/.test(tail) && /[A-Za-z]{3}/.test(tail)) return tail;
  }
  return null;
}

function lastSeparator(text: string, end: number): number {
  for (let i = end - 1; i > 0; i--) if (SEPARATORS.test(text[i])) return i;
  return -1;
}

export class TextFitter {
  private widthCache = new Map<string, number>();

  constructor(private readonly ctx: CanvasRenderingContext2D) {}

  /** Width of `text` at font size `fs` (world px). */
  measure(text: string, fs: number): number {
    let w10 = this.widthCache.get(text);
    if (w10 === undefined) {
      const ctx = this.ctx;
      const font = ctx.font;
      ctx.font = `10px ${FONT}`;
      w10 = ctx.measureText(text).width;
      ctx.font = font;
      if (this.widthCache.size > 50000) this.widthCache.clear();
      this.widthCache.set(text, w10);
    }
    return (w10 * fs) / 10;
  }

  /** The text to draw in `avail` world px: a long label first shrinks (down to 80% of `fs`, never
   * below the readable size at scale k), then is cut (see the top of this file); null: no room. */
  fit(text: string, avail: number, fs: number, k: number): Fit | null {
    const fit = this.fitPlain(text, avail, fs, k);
    if (!fit || fit.t === text) return fit;
    // cut: a PyTorch `Type[attribute] (n)` keeps its attribute, the part that differs
    const m = /^(.*?)( \(\d+\))?$/.exec(text)!;
    const parts = attributeParts(m[1]);
    return parts ? this.fitAttributeFirst(parts[0], parts[1], m[2] ?? "", avail, fs, k) : fit;
  }

  /** `attribute · Type (n)` in `avail`: whole (shrunk as fitPlain shrinks), else the type cut
   * first (`embeddings · BertEmbed…`), else the attribute alone with the usual cuts. */
  private fitAttributeFirst(attr: string, type: string, card: string, avail: number, fs: number, k: number): Fit | null {
    const whole = `${attr} · ${type}${card}`;
    const size = this.fitPlain(whole, avail, fs, k);
    if (!size) return null;
    if (size.t === whole) return size;
    const make = (h: number) => `${attr} · ${type.slice(0, h)}…${card}`;
    const h = this.longestHead(type, type.length, make, avail, size.fs);
    if (h > 0) return { t: make(h), tw: this.measure(make(h), size.fs), fs: size.fs };
    return this.fitPlain(attr + card, avail, fs, k);
  }

  private fitPlain(text: string, avail: number, fs: number, k: number): Fit | null {
    if (avail <= fs) return null;
    let tw = this.measure(text, fs);
    if (tw > avail) {
      const smaller = Math.max(fs * 0.8, READABLE_LABEL_PX / k, fs * (avail / tw));
      if (smaller < fs) {
        fs = smaller;
        tw = this.measure(text, fs);
      }
    }
    if (tw <= avail + 1e-6) return { t: text, tw, fs }; // (shrunk to fit exactly: rounding may exceed it by an ulp)
    const t = this.cutMiddle(text, avail, fs) ?? this.cutEnd(text, avail, fs);
    return t === null ? null : { t, tw: this.measure(t, fs), fs };
  }

  /** `head…tail` keeping the distinguishing tail whole, when it takes at most 75% of the room. */
  private cutMiddle(text: string, avail: number, fs: number): string | null {
    const tail = distinguishingTail(text);
    if (tail === null || this.measure("…" + tail, fs) > 0.75 * avail) return null;
    const room = text.length - tail.length - 1; // head characters before the tail's separator
    const head = this.longestHead(text, room, (h) => text.slice(0, h) + "…" + tail, avail, fs);
    return head >= 3 ? text.slice(0, head) + "…" + tail : null;
  }

  private cutEnd(text: string, avail: number, fs: number): string | null {
    const head = this.longestHead(text, text.length, (h) => text.slice(0, h) + "…", avail, fs);
    return head === 0 ? null : text.slice(0, head) + "…";
  }

  /** The largest h <= max with measure(make(h)) <= avail (0 if none). */
  private longestHead(text: string, max: number, make: (h: number) => string, avail: number, fs: number): number {
    let lo = 0, hi = Math.min(max, text.length);
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.measure(make(mid), fs) <= avail) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}
