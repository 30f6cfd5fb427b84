// The deep link's pieces in the page: the "Copy link" button, the warning line of a link that
// could not be fully honoured, and the view's state as a LinkState (app/deep_link.ts keeps it in
// TensorBoard's URL). Text only.
import * as api from "../api/client";
import type { GraphRef } from "../api/types";
import { el } from "../ui/dom";
import { copyText, linkUrl, readLink, refState, writeLink, type LinkState } from "./deep_link";

/** Panning and zooming redraw every frame: the URL follows the view once it has rested this long
 * (browsers throttle history.replaceState past about 200 calls in 10 s). */
const VIEW_WRITE_DELAY_MS = 300;

export class LinkBar {
  readonly button = el("button", { text: "Copy link", "data-action": "copy-link", title: "Copy a link to this view (graph, open groups, selection, pan and zoom, colours, trace, compare)" });
  readonly warning = el("div", { className: "gx-warn", "data-link-warning": "", role: "status" });

  constructor(private readonly current: () => LinkState | null) {
    this.button.addEventListener("click", () => void this.copy());
  }

  read(): Promise<LinkState> {
    return readLink();
  }

  state(ref: GraphRef | null, expanded: string[], selected: string | null, color: string, trace: string,
        compare: string | null, split: string | null = null, view: string | null = null): LinkState | null {
    if (!ref) return null;
    return {
      ...refState(ref),
      expanded: [...expanded].sort(),
      selected: selected ?? undefined,
      color: color === "none" ? undefined : color,
      trace: trace === "off" ? undefined : trace,
      compare: compare ?? undefined,
      split: split ?? undefined,
      view: view ?? undefined,
    };
  }

  private written = ""; // the last state written, its view left out
  private viewTimer = 0;

  /** Keeps the URL in step with the view: at once when more than the pan and zoom changed, else
   * once the view rests. */
  save(): void {
    const s = this.current();
    window.clearTimeout(this.viewTimer);
    if (!s) return;
    const rest = JSON.stringify({ ...s, view: undefined });
    if (rest !== this.written) {
      this.written = rest;
      writeLink(s);
      return;
    }
    this.viewTimer = window.setTimeout(() => {
      const now = this.current();
      if (now) writeLink(now);
    }, VIEW_WRITE_DELAY_MS);
  }

  async copy(): Promise<void> {
    const s = this.current();
    if (!s) return;
    const url = linkUrl(s);
    writeLink(s);
    const ok = await copyText(url);
    document.body.dataset.linkCopied = url;
    this.button.textContent = ok ? "Link copied" : "Copy failed: link in the address bar";
    window.setTimeout(() => (this.button.textContent = "Copy link"), 1500);
  }

  /** One line saying what of the link could not be restored (empty: hidden). */
  warn(lines: string[]): void {
    this.warning.textContent = lines.length ? `⚠ ${lines.join(" ")}` : "";
    this.warning.title = lines.join("\n");
    this.warning.classList.toggle("gx-on", lines.length > 0);
    document.body.dataset.linkWarnings = String(lines.length);
  }

  async nodeExists(ref: GraphRef, view: api.ViewOptions, name: string): Promise<boolean> {
    try {
      await api.fetchNode(ref, name, view);
      return true;
    } catch {
      return false;
    }
  }
}
