// Uploads from disk (POST /upload): a GraphDef (.pbtxt / .pb), a PyTorch graph (.pt2 or .onnx) or an event file. The uploaded
// graph joins the listing (run `__upload__`) and what the server said about it (UploadAnswer
// source and warnings: an event file's skipped corrupt records, ...) is kept per upload for
// the warning line while that graph is shown.
import * as api from "../api/client";
import type { GraphRef, Listing, UploadAnswer } from "../api/types";
import type { UploadNote } from "../ui/warnings";
import { UPLOAD_RUN } from "./pickers";
import type { Shell } from "./shell";

/** Adds an uploaded graph to the listing (once) so the pickers can show and reopen it. */
function addUpload(listing: Listing, ans: UploadAnswer): GraphRef {
  let run = listing.runs.find((r) => r.run === UPLOAD_RUN);
  if (!run) listing.runs.push((run = { run: UPLOAD_RUN, tags: [] }));
  if (!run.tags.some((t) => t.tag === ans.graph.tag)) {
    const k = ans.graph.kind;
    run.tags.push({ tag: ans.graph.tag, run_graph: k === "op", op_graph: false, conceptual_graph: k === "conceptual", profile: k === "profile", steps: [] });
  }
  return { ...ans.graph, step: ans.graph.step ?? null };
}

export class Uploads {
  private readonly notes = new Map<string, UploadNote>(); // by upload id (= tag)

  /** The note of `ref` when it is an upload, else null. */
  noteFor(ref: GraphRef | null): UploadNote | null {
    return ref && ref.run === UPLOAD_RUN ? this.notes.get(ref.tag) ?? null : null;
  }

  /**
   * Uploads the file chosen in the toolbar's file input; the graph to open, or null when no
   * file was chosen. Throws with the server's message when the upload is refused.
   */
  async fromInput(ui: Shell, listing: Listing): Promise<GraphRef | null> {
    const input = ui.bar.file;
    const f = input.files?.[0];
    input.value = "";
    if (!f) return null;
    ui.showError(null);
    ui.setStatus("loading");
    ui.showProgress(null, `uploading ${f.name}…`);
    try {
      const ans = await api.upload(await f.arrayBuffer(), f.name);
      this.notes.set(ans.graph.tag, { filename: f.name, source: ans.source ?? "graph file", warnings: (ans.warnings ?? []).map(String) });
      return addUpload(listing, ans);
    } catch (e) {
      throw new Error(`Upload of ${f.name} failed: ${(e as Error).message}`);
    } finally {
      ui.showProgress(null);
    }
  }
}
