// Colour modes: node -> fill colour, plus the legend entries describing the mapping.
// Values follow the stock Graphs tab (tf_graph_common): compute time / memory scale
// #fff5f0 -> #fb6a4a, TPU compatible #0f9d58 / incompatible #db4437.
import type { SceneNode } from "../api/types";

export type ColorMode = "none" | "structure" | "device" | "xla_cluster" | "compute_time" | "memory" | "tpu" | "diff" | "node_data";

export const COLOR_MODES: { id: ColorMode; label: string }[] = [
  { id: "none", label: "None" },
  { id: "structure", label: "Structure" },
  { id: "device", label: "Device" },
  { id: "xla_cluster", label: "XLA cluster" },
  { id: "compute_time", label: "Compute time" },
  { id: "memory", label: "Memory" },
  { id: "tpu", label: "TPU compatibility" },
  { id: "diff", label: "Diff (compare with…)" }, // app/compare.ts: DiffColorer
];

export interface LegendEntry {
  color: string;
  label: string;
  gradient?: [string, string];
}

export interface Palette {
  background: string;
  opFill: string;
  opStroke: string;
  metaFill: string;
  metaStroke: string;
  expandedFill: string;
  text: string;
  mutedText: string;
  edge: string;
  edgeLabel: string;
  reversedEdge: string;
  selected: string;
  traced: string;
  unknown: string;
}

export const LIGHT: Palette = {
  background: "#ffffff",
  opFill: "#ffffff",
  opStroke: "#8a8a8a",
  metaFill: "#d3dceb",
  metaStroke: "#8a97ad",
  expandedFill: "rgba(225,232,245,0.55)",
  text: "#202124",
  mutedText: "#5f6368",
  edge: "#9aa0a6",
  edgeLabel: "#5f6368",
  reversedEdge: "#8e24aa",
  selected: "#f57c00",
  traced: "#e53935",
  unknown: "#e0e0e0",
};

export const DARK: Palette = {
  background: "#202124",
  opFill: "#3c4043",
  opStroke: "#9aa0a6",
  metaFill: "#34445c",
  metaStroke: "#7f93b5",
  expandedFill: "rgba(52,68,92,0.35)",
  text: "#e8eaed",
  mutedText: "#9aa0a6",
  edge: "#80868b",
  edgeLabel: "#bdc1c6",
  reversedEdge: "#ce93d8",
  selected: "#ffb74d",
  traced: "#ff6e6e",
  unknown: "#5f6368",
};

const HEAT_LO = [0xff, 0xf5, 0xf0];
const HEAT_HI = [0xfb, 0x6a, 0x4a];
export const TPU_OK = "#0f9d58";
export const TPU_BAD = "#db4437";

function hashHue(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return ((h >>> 0) % 360 + 360) % 360;
}

// A qualitative palette (light / dark variants) for the most frequent categories; hashed hues after.
const QUAL_LIGHT = ["#8ab4f8", "#fdd663", "#81c995", "#f28b82", "#c58af9", "#78d9ec", "#fcad70", "#ff8bcb", "#a8c7a0", "#d7aefb"];
const QUAL_DARK = ["#1a5fb4", "#9c7a00", "#2e7d32", "#b3261e", "#6a1b9a", "#00838f", "#c75b00", "#ad1457", "#4e6e43", "#5e35b1"];

export function categoryColor(s: string, dark: boolean, rank = -1): string {
  if (rank >= 0 && rank < QUAL_LIGHT.length) return (dark ? QUAL_DARK : QUAL_LIGHT)[rank];
  const hue = hashHue(s);
  return dark ? `hsl(${hue},45%,38%)` : `hsl(${hue},60%,78%)`;
}

function heat(t: number): string {
  const c = HEAT_LO.map((lo, i) => Math.round(lo + (HEAT_HI[i] - lo) * Math.max(0, Math.min(1, t))));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

/** Maps nodes to colours for one mode over one scene; null = draw with the default fill. */
export class Colorer {
  private maxTime = 0;
  private maxMem = 0;
  private categories = new Map<string, number>();
  private rank = new Map<string, number>();
  private colors = new Map<string, string>();
  constructor(readonly mode: ColorMode, nodes: SceneNode[], private readonly dark: boolean) {
    if (mode === "none" || mode === "diff" || mode === "tpu" || mode === "node_data") return; // nothing to gather
    for (const n of nodes) {
      if (n.compute_time_us) this.maxTime = Math.max(this.maxTime, n.compute_time_us);
      if (n.memory_bytes) this.maxMem = Math.max(this.maxMem, n.memory_bytes);
      const key = this.category(n);
      if (key) this.categories.set(key, (this.categories.get(key) ?? 0) + 1);
    }
    [...this.categories.entries()]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .forEach(([k], i) => this.rank.set(k, i));
  }
  private colorOf(k: string): string {
    let c = this.colors.get(k);
    if (c === undefined) this.colors.set(k, (c = categoryColor(k, this.dark, this.rank.get(k) ?? -1)));
    return c;
  }
  private category(n: SceneNode): string | null {
    if (this.mode === "structure") return n.kind === "meta" || n.kind === "series" ? n.template : null;
    if (this.mode === "device") return n.device;
    if (this.mode === "xla_cluster") return n.xla_cluster;
    return null;
  }
  fill(n: SceneNode): string | null {
    switch (this.mode) {
      case "none":
        return null;
      case "structure":
      case "device":
      case "xla_cluster": {
        const c = this.category(n);
        return c ? this.colorOf(c) : null;
      }
      case "compute_time":
        return n.compute_time_us === null || this.maxTime <= 0 ? null : heat(n.compute_time_us / this.maxTime);
      case "memory":
        return n.memory_bytes === null || this.maxMem <= 0 ? null : heat(n.memory_bytes / this.maxMem);
      case "tpu":
        return n.tpu_compatible === null ? null : n.tpu_compatible ? TPU_OK : TPU_BAD;
      case "diff": // drawn by app/compare.ts's DiffColorer once a graph to compare with is picked
      case "node_data": // drawn by render/node_data_colors.ts's NodeDataColorer
        return null;
    }
  }
  legend(): LegendEntry[] {
    switch (this.mode) {
      case "none":
        return [];
      case "structure":
      case "device":
      case "xla_cluster": {
        const entries = [...this.categories.entries()].sort((a, b) => (this.rank.get(a[0]) ?? 0) - (this.rank.get(b[0]) ?? 0));
        const out: LegendEntry[] = entries.slice(0, 12).map(([k, count]) => ({
          color: this.colorOf(k),
          label: this.mode === "structure" ? `template ${k} (${count})` : `${k} (${count})`,
        }));
        if (entries.length > 12) out.push({ color: "transparent", label: `… ${entries.length - 12} more` });
        if (!entries.length) out.push({ color: "transparent", label: "no data in this graph" });
        return out;
      }
      case "compute_time":
        return this.maxTime > 0
          ? [{ color: "", label: `0 – ${fmtTime(this.maxTime)}`, gradient: [heat(0), heat(1)] }]
          : [{ color: "transparent", label: "no compute time (needs a profile)" }];
      case "memory":
        return this.maxMem > 0
          ? [{ color: "", label: `0 – ${fmtBytes(this.maxMem)}`, gradient: [heat(0), heat(1)] }]
          : [{ color: "transparent", label: "no memory data (needs a profile)" }];
      case "tpu":
        return [
          { color: TPU_OK, label: "TPU compatible" },
          { color: TPU_BAD, label: "not TPU compatible" },
        ];
      case "diff":
        return [{ color: "transparent", label: "pick a graph to compare with" }];
      case "node_data":
        return [{ color: "transparent", label: "loading node data…" }];
    }
  }
}

export function fmtTime(us: number): string {
  return us >= 1e6 ? `${(us / 1e6).toFixed(2)} s` : us >= 1e3 ? `${(us / 1e3).toFixed(2)} ms` : `${Math.round(us)} µs`;
}

export function fmtBytes(b: number): string {
  const units = ["B", "KB", "MB", "GB"];
  let i = 0;
  while (b >= 1024 && i < units.length - 1) {
    b /= 1024;
    i++;
  }
  return `${b.toFixed(i ? 1 : 0)} ${units[i]}`;
}
