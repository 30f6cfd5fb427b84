// Fetching and indexing the scene of one expansion state. The newest request wins: an older
// one still running resolves to null (superseded). The server's job stages go to the progress
// bar; the scene comes indexed from the scene worker, or is indexed here in short slices
// (SceneModel.build), so a 50k-node scene never freezes the page. Load timings go to the view's dataset (sceneVia, sceneIndex, buildYields, loadMs).
import type * as api from "../api/client";
import { SceneSource } from "../api/scene_source";
import type { GraphRef } from "../api/types";
import { SceneModel } from "../render/model";
import { SLICE_MS, Slicer, Superseded } from "../render/slicer";
import { markOnce } from "../marks";
import type { LoadUi } from "./graph_view";

export function sameGraph(a: GraphRef, b: GraphRef): boolean {
  return a.run === b.run && a.tag === b.tag && a.kind === b.kind && (a.step ?? null) === (b.step ?? null);
}

export class SceneLoader {
  readonly source = new SceneSource();
  private token = 0;

  constructor(private readonly ui: LoadUi, private readonly data: DOMStringMap = document.body.dataset) {}

  /** Drops the load under way (its answer is never used). */
  cancel(): void {
    this.source.cancel();
  }

  /**
   * The indexed scene of `ref` with `expanded` open, or null when a newer load superseded this
   * one. `current` is the scene on screen: the worker then may fetch only the difference.
   * Throws the load's error (the server's message) while it is still the newest load.
   */
  async load(ref: GraphRef, view: api.ViewOptions, expanded: string[], current: SceneModel | null): Promise<SceneModel | null> {
    const ui = this.ui;
    const token = ++this.token;
    const isCurrent = () => token === this.token;
    this.source.cancel();
    ui.setStatus("loading");
    ui.showError(null);
    ui.showProgress(null, "loading…");
    const t0 = performance.now();
    let model: SceneModel;
    try {
      const from = current && sameGraph(current.scene.graph, ref) ? current.scene.expanded : null;
      const got = await this.source.load(ref, view, expanded, from, (job) => isCurrent() && ui.showProgress(job), isCurrent);
      if (!isCurrent()) return null;
      markOnce("scene");
      this.data.sceneVia = got.via;
      this.data.sceneSource = this.source.mode;
      const slicer = new Slicer(SLICE_MS, isCurrent);
      model = got.index ? await SceneModel.fromIndex(got.scene, got.index, slicer) : await SceneModel.build(got.scene, slicer);
      this.data.sceneIndex = got.index ? "worker" : "main"; // where the drawing index was built
      markOnce("model");
      this.data.buildYields = String(slicer.yields);
      this.data.loadMs = (performance.now() - t0).toFixed(0);
    } catch (e) {
      if (!isCurrent() || e instanceof Superseded) return null;
      ui.showProgress(null);
      throw e;
    }
    if (!isCurrent()) return null;
    ui.showProgress(null);
    return model;
  }
}
