// Deep links: the view in TensorBoard's own URL, so the link users share is the
// TensorBoard link. TensorBoard keeps plugin data in its URL hash as `p.<plugin>.<key>=<value>`
// (`#graph_explorer&p.graph_explorer.run=train&...`) and hands it to a plugin iframe through
// its plugin API (message "experimental.GetURLPluginData" over the MessageChannel the iframe
// opens with "experimental.bootstrap"). We ask it first; but TensorBoard 2.21 answers it from
// its legacy tf_storage hash dict, which its Angular app never fills from the URL (the answer is
// `{}` for any URL), so in practice the hash is read directly from the parent page (same
// origin; document.body.dataset.linkVia says which was used). That API only reads; writing goes to the parent page's
// URL with history.replaceState (same origin: the iframe is served by TensorBoard), which
// TensorBoard does not react to. Outside TensorBoard (the page opened alone) the page's own
// hash is used. Keys: run, tag, kind, step, expanded (JSON array), selected, color, trace,
// compare (JSON [run, tag, kind, step]), split (the second pane's graph, the same JSON), view
// (the main pane's pan and zoom: the world point at the canvas's centre and the scale, "x,y,k";
// a window of another size shows the same point at the same scale).
import type { GraphRef } from "../api/types";

export const PLUGIN = "graph_explorer";
const PREFIX = `p.${PLUGIN}.`;

export interface LinkState {
  run?: string;
  tag?: string;
  kind?: string;
  step?: string;
  expanded?: string[];
  selected?: string;
  color?: string;
  trace?: string;
  compare?: string;
  split?: string; // the second pane's graph, JSON [run, tag, kind, step] (app/split_pane.ts)
  view?: string; // the main pane's pan and zoom, "x,y,k" (viewText / parseView)
}

const KEYS = ["run", "tag", "kind", "step", "expanded", "selected", "color", "trace", "compare", "split", "view"] as const;

/** A pan and zoom: the world point at the canvas's centre, and the scale (screen px per world unit). */
export interface ViewPoint {
  x: number;
  y: number;
  k: number;
}

/** The link's text of a view: the centre to 0.1 world units, the scale to 4 significant digits. */
export function viewText(v: ViewPoint): string {
  const r = (n: number) => String(Math.round(n * 10) / 10);
  return `${r(v.x)},${r(v.y)},${Number(v.k.toPrecision(4))}`;
}

/** The view a link's text names; null unless it is three finite numbers with the scale within
 * [minK, maxK] (the viewport's limits). */
export function parseView(text: string, minK: number, maxK: number): ViewPoint | null {
  const parts = text.split(",");
  if (parts.length !== 3 || parts.some((p) => !/^\s*-?\d+(\.\d+)?(e[-+]?\d+)?\s*$/i.test(p))) return null;
  const [x, y, k] = parts.map(Number);
  if (![x, y, k].every(Number.isFinite) || k < minK || k > maxK) return null;
  return { x, y, k };
}

/** The page whose URL holds the link: TensorBoard's (the parent) when reachable, else this one. */
function linkWindow(): Window {
  try {
    if (window.parent !== window && window.parent.location.href) return window.parent;
  } catch {
    /* cross-origin parent: our own URL only */
  }
  return window;
}

function parseHash(hash: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of hash.replace(/^#/, "").split("&")) {
    if (!part) continue;
    const eq = part.indexOf("=");
    try {
      if (eq < 0) out.set(decodeURIComponent(part), "");
      else out.set(decodeURIComponent(part.slice(0, eq)), decodeURIComponent(part.slice(eq + 1)));
    } catch {
      /* a malformed escape: skip that part */
    }
  }
  return out;
}

function fromDict(d: Record<string, string>): LinkState {
  const s: LinkState = {};
  for (const k of KEYS) {
    const v = d[k];
    if (typeof v !== "string" || v === "") continue;
    if (k === "expanded") {
      try {
        const parsed = JSON.parse(v);
        if (Array.isArray(parsed)) s.expanded = parsed.filter((x): x is string => typeof x === "string");
      } catch {
        /* not JSON: ignored, reported as nothing to restore */
      }
    } else s[k] = v;
  }
  return s;
}

/** Asks TensorBoard's plugin API for this plugin's URL data; null when there is no host answering. */
function askHost(timeoutMs: number): Promise<Record<string, string> | null> {
  if (window.parent === window) return Promise.resolve(null);
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    const timer = window.setTimeout(() => resolve(null), timeoutMs);
    channel.port1.onmessage = (ev) => {
      try {
        const msg = JSON.parse(ev.data);
        if (msg.isReply && msg.type === "experimental.GetURLPluginData") {
          window.clearTimeout(timer);
          resolve(msg.payload && typeof msg.payload === "object" ? msg.payload : {});
        }
      } catch {
        /* not ours */
      }
    };
    channel.port1.start();
    try {
      window.parent.postMessage("experimental.bootstrap", "*", [channel.port2]);
      channel.port1.postMessage(JSON.stringify({ type: "experimental.GetURLPluginData", id: 0, payload: { pluginName: PLUGIN }, error: null, isReply: false }));
    } catch {
      window.clearTimeout(timer);
      resolve(null);
    }
  });
}

/** The link's state: TensorBoard's plugin API first, else the URL hash read directly. */
export async function readLink(): Promise<LinkState> {
  const fromHost = await askHost(800);
  if (fromHost && Object.keys(fromHost).length) {
    document.body.dataset.linkVia = "plugin_api";
    return fromDict(fromHost);
  }
  const d: Record<string, string> = {};
  for (const [k, v] of parseHash(linkWindow().location.hash)) if (k.startsWith(PREFIX)) d[k.slice(PREFIX.length)] = v;
  document.body.dataset.linkVia = Object.keys(d).length ? "hash" : "none";
  return fromDict(d);
}

/** The URL with `state` as this plugin's data (other hash parts kept, ours replaced). */
export function linkUrl(state: LinkState): string {
  const w = linkWindow();
  const kept = [...parseHash(w.location.hash)].filter(([k]) => !k.startsWith(PREFIX));
  const parts = kept.map(([k, v]) => (v === "" ? encodeURIComponent(k) : `${encodeURIComponent(k)}=${encodeURIComponent(v)}`));
  if (w !== window && !kept.length) parts.push(PLUGIN); // TensorBoard's tab
  for (const k of KEYS) {
    const v = state[k];
    if (v === undefined || v === "" || (Array.isArray(v) && !v.length)) continue;
    parts.push(`${PREFIX}${k}=${encodeURIComponent(Array.isArray(v) ? JSON.stringify(v) : v)}`);
  }
  const url = new URL(w.location.href);
  url.hash = parts.join("&");
  return url.href;
}

let last = "";

/** Puts `state` into the URL (no navigation, no history entry); cheap when nothing changed. */
export function writeLink(state: LinkState): void {
  const url = linkUrl(state);
  if (url === last) return;
  last = url;
  try {
    linkWindow().history.replaceState(linkWindow().history.state, "", url);
  } catch {
    /* a sandboxed page: the copy-link button still gives the link */
  }
  document.body.dataset.link = url;
}

export function refState(ref: GraphRef): LinkState {
  return { run: ref.run, tag: ref.tag, kind: ref.kind, step: ref.step === null ? undefined : String(ref.step) };
}

/** Copies `text` to the clipboard (falls back to a selected text field). */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = document.createElement("textarea");
    area.value = text;
    document.body.appendChild(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch {
      ok = false;
    }
    area.remove();
    return ok;
  }
}
