// Colour mode "node_data": a node's value (from /node_data, already aggregated to groups by the
// server) -> fill. Scales: sequential (light -> dark red), diverging (blue - white - red around 0
// or the midpoint), thresholds (Model Explorer's: the first upper bound >= value gives the colour)
// or the data's own gradient. NaN and infinities have their own colours: a NaN is never a number.
import type { NodeDataAnswer, SceneNode } from "../api/types";
import { Colorer, type LegendEntry } from "./colors";

export type NodeDataScale = "sequential" | "diverging" | "thresholds";

export interface NodeDataSettings {
  scale: NodeDataScale;
  /** upper bounds for "thresholds", ascending; empty: the data's own thresholds */
  thresholds: number[];
  /** the sequential scale on log(1 + value) (costs span orders of magnitude) */
  log?: boolean;
  /** how values are written in the legend (default fmtValue) */
  fmt?: (v: number) => string;
}

export const NAN_COLOR = "#d500f9";
export const INF_COLOR = "#311b92";
const SEQ: [number, number, number][] = [[0xff, 0xf5, 0xeb], [0xfd, 0x8d, 0x3c], [0xa6, 0x36, 0x03]];
const DIV: [number, number, number][] = [[0x21, 0x66, 0xac], [0xf7, 0xf7, 0xf7], [0xb2, 0x18, 0x2b]];
const STEP_COLORS = ["#1a9850", "#91cf60", "#fee08b", "#fc8d59", "#d73027", "#7f0000"];

function ramp(stops: [number, number, number][], t: number): string {
  const x = Math.max(0, Math.min(1, t)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  const f = x - i;
  const c = stops[i].map((a, k) => Math.round(a + (stops[i + 1][k] - a) * f));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

const fmtNumber = (v: number) => fmtValue(v);

export function fmtValue(v: number | null, nonfinite?: string): string {
  if (v === null) return nonfinite === "nan" ? "NaN" : nonfinite === "-inf" ? "-∞" : nonfinite === "inf" ? "∞" : "—";
  const a = Math.abs(v);
  return a !== 0 && (a >= 1e5 || a < 1e-3) ? v.toExponential(3) : String(Number(v.toPrecision(4)));
}

export class NodeDataColorer extends Colorer {
  private readonly lo: number;
  private readonly hi: number;
  private readonly bounds: number[];
  private readonly boundColors: string[];
  constructor(readonly answer: NodeDataAnswer, readonly settings: NodeDataSettings, nodes: SceneNode[], dark: boolean,
              private readonly label: string = answer.data_tag) {
    super("node_data", nodes, dark);
    const [lo, hi] = answer.range ?? [0, 0];
    this.lo = lo;
    this.hi = hi;
    const own = settings.thresholds.length ? settings.thresholds : answer.thresholds.map((t) => t.at);
    this.bounds = [...own].sort((a, b) => a - b);
    this.boundColors = settings.thresholds.length || !answer.thresholds.length
      ? this.bounds.map((_, i) => STEP_COLORS[Math.min(STEP_COLORS.length - 1, Math.round((i * (STEP_COLORS.length - 1)) / Math.max(1, this.bounds.length - 1)))])
      : [...answer.thresholds].sort((a, b) => a.at - b.at).map((t) => t.color);
  }

  /** The value of a drawn node: its own name's, or for a copy drawn beside another node, the original's. */
  value(n: SceneNode): number | string | undefined {
    for (const name of [n.name, n.of]) {
      if (!name) continue;
      const v = this.answer.values[name];
      if (v !== undefined) return v;
      const bad = this.answer.nonfinite[name];
      if (bad !== undefined) return bad;
    }
    return undefined;
  }

  colorOfValue(v: number | string): string {
    if (typeof v === "string") return v === "nan" ? NAN_COLOR : INF_COLOR;
    if (this.settings.scale === "thresholds" && this.bounds.length) {
      const i = this.bounds.findIndex((b) => v <= b);
      return i < 0 ? "#7f7f7f" : this.boundColors[i];
    }
    if (this.settings.scale === "diverging") {
      const m = Math.max(Math.abs(this.lo), Math.abs(this.hi)) || 1;
      const mid = this.lo < 0 && this.hi > 0 ? 0 : (this.lo + this.hi) / 2;
      const span = this.lo < 0 && this.hi > 0 ? m : (this.hi - this.lo) / 2 || 1;
      return ramp(DIV, 0.5 + (v - mid) / (2 * span));
    }
    const gradient = this.answer.gradient;
    // one value everywhere (a NaN count of 0 at every module) carries no contrast: the pale end for
    // 0 and below, the dark end above
    const f = this.settings.log ? (x: number) => Math.log1p(Math.max(0, x)) : (x: number) => x;
    const t = this.hi > this.lo ? (f(v) - f(this.lo)) / (f(this.hi) - f(this.lo)) : v > 0 ? 1 : 0;
    if (gradient.length >= 2) return gradientColor(gradient.map((g) => [g.at, g.color] as [number, string]), t);
    return ramp(SEQ, t);
  }

  override fill(n: SceneNode): string | null {
    const v = this.value(n);
    return v === undefined ? null : this.colorOfValue(v);
  }

  override legend(): LegendEntry[] {
    const a = this.answer;
    const out: LegendEntry[] = [];
    const fmtValue = this.settings.fmt ?? fmtNumber;
    const title = this.settings.fmt ? `${this.label}${this.settings.log ? " (log scale)" : ""}` : `${this.label} (${a.agg}) · step ${a.step}`;
    if (this.settings.scale === "thresholds" && this.bounds.length) {
      out.push({ color: "transparent", label: title });
      this.bounds.forEach((b, i) => out.push({ color: this.boundColors[i], label: `≤ ${fmtValue(b)}` }));
      out.push({ color: "#7f7f7f", label: `> ${fmtValue(this.bounds[this.bounds.length - 1])}` });
    } else if (a.range) {
      const lo = this.colorOfValue(this.lo);
      const hi = this.colorOfValue(this.hi);
      out.push({ color: "transparent", label: title });
      out.push({ color: "", label: `${fmtValue(this.lo)} – ${fmtValue(this.hi)}`, gradient: [lo, hi] });
    } else {
      out.push({ color: "transparent", label: `${title}: no finite value shown` });
    }
    const bad = Object.values(a.nonfinite);
    if (bad.includes("nan")) out.push({ color: NAN_COLOR, label: `NaN (${bad.filter((b) => b === "nan").length})` });
    if (bad.some((b) => b !== "nan")) out.push({ color: INF_COLOR, label: "±∞" });
    return out;
  }
}

function gradientColor(stops: [number, string][], t: number): string {
  // Model Explorer's gradient: colours at stops 0..1; the nearest stop at or below t (no blending
  // of arbitrary CSS colours here).
  const sorted = [...stops].sort((a, b) => a[0] - b[0]);
  let c = sorted[0][1];
  for (const [at, color] of sorted) if (t >= at) c = color;
  return c;
}
