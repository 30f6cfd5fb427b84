// The page skeleton: toolbar, progress bar, error box, warning line, canvas stage (canvas,
// status, empty note, legend, minimap) and side panel (search results, info pane, removed
// nodes, ungrouped series). Owns what the app tells the user about loading: status, progress,
// errors (text only). Publishes status/error/stage/theme on document.body.dataset.
import type { Job } from "../api/types";
import { el } from "../ui/dom";
import { CSS } from "../ui/styles";
import { Toolbar } from "../ui/toolbar";

export type Status = "loading" | "ready" | "error" | "empty";

export class Shell {
  readonly body = document.body;
  readonly root = el("div", { className: "gx-root" });
  readonly bar = new Toolbar();
  readonly warnings = el("div", { className: "gx-warn", "data-warnings": "" });
  readonly stage = el("div", { className: "gx-stage" });
  readonly canvas = el("canvas", { className: "gx-canvas", "data-canvas": "" });
  readonly miniCanvas = el("canvas", { className: "gx-minimap", "data-minimap": "" });
  readonly legend = el("div", { className: "gx-legend", "data-legend": "" });
  readonly status = el("div", { className: "gx-status" });
  readonly empty = el("div", { className: "gx-empty" });
  readonly searchBox = el("section", { "data-results": "" });
  readonly infoBox = el("section", { "data-info": "" });
  readonly hiddenBox = el("section", { "data-hidden-list": "" });
  readonly ungroupBox = el("section", { "data-ungrouped-list": "" });
  private readonly progress = el("div", { className: "gx-progress", "data-progress": "" });
  private readonly progressFill = el("div");
  private readonly progressText = el("span", { "data-stage-text": "" });
  private readonly error = el("div", { className: "gx-error", "data-error-box": "", role: "alert" });
  private readonly side = el("div", { className: "gx-side" });

  /** Puts the skeleton (and the app's CSS) into the page. */
  mount(): void {
    const style = document.createElement("style");
    style.textContent = CSS;
    document.head.appendChild(style);
    this.body.style.margin = "0";
    this.progress.append(el("div", { className: "gx-bar" }, this.progressFill), this.progressText);
    this.stage.append(this.canvas, this.status, this.empty, this.legend, this.miniCanvas);
    this.side.append(this.searchBox, this.infoBox, this.hiddenBox, this.ungroupBox);
    this.root.append(this.bar.root, this.progress, this.error, this.warnings, el("div", { className: "gx-main" }, this.stage, this.side));
    this.body.appendChild(this.root);
  }

  setTheme(dark: boolean): void {
    this.root.classList.toggle("gx-dark", dark);
    this.body.style.background = dark ? "#202124" : "#fff";
    this.body.dataset.theme = dark ? "dark" : "light";
  }

  setStatus(s: Status): void {
    this.body.dataset.status = s;
  }

  showError(message: string | null): void {
    this.error.textContent = message ?? "";
    this.error.classList.toggle("gx-on", !!message);
    this.body.dataset.error = message ?? "";
  }

  /** The server's stage and progress of a long load, or a plain text, or nothing (null). */
  showProgress(job: Job | null, text?: string): void {
    this.progress.classList.toggle("gx-on", !!job || !!text);
    if (job) {
      this.progressFill.style.width = `${Math.round(Math.max(0, Math.min(1, job.progress)) * 100)}%`;
      this.progressText.textContent = `${job.stage} ${Math.round(job.progress * 100)}%`;
      this.body.dataset.stage = job.stage;
    } else if (text) {
      this.progressFill.style.width = "15%";
      this.progressText.textContent = text;
    }
  }

  /** A note over the empty canvas ("No graph data…", "This graph is empty."), or none. */
  showEmpty(text: string | null): void {
    if (text !== null) this.empty.textContent = text;
    this.empty.classList.toggle("gx-on", text !== null);
  }
}
