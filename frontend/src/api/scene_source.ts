// Where the app gets scenes from: the scene worker when it runs (fetch + JSON.parse off the
// main thread, scenes arriving in chunks, /scene_delta for expand/collapse), else the same
// requests on the main thread. A worker that fails to start or dies falls back for good.
// A whole scene asked for before the worker runs (the first one: the worker takes tens of ms
// to start) is fetched here at once, polling its job while the server builds it; a small
// answer is parsed here and handed to the worker as its seed for later deltas, a big one goes
// to the worker to parse off the main thread.
import { markOnce, measureAbsolute } from "../marks";
import * as api from "./client";
import { type SceneHead, type WorkerAnswer, type WorkerRequest } from "./scene_protocol";
import type { SceneIndex } from "../render/scene_index";
import type { GraphRef, Scene, SceneEdge, SceneNode } from "./types";

export const WORKER_PATH = "static/scene_worker.js";
/** A /scene answer up to this size is parsed on the main thread (~ a few ms), bigger ones in the worker. */
export const MAIN_PARSE_MAX_BYTES = 1 << 20;

/** How a scene came: from the worker (whole or as a delta), fetched here before the worker ran, or on the main thread after a fallback. */
export type SceneVia = "scene" | "delta" | "first" | "main";

interface Pending {
  onProgress: api.ProgressFn;
  head: SceneHead | null;
  via: "scene" | "delta";
  nodes: SceneNode[];
  edges: SceneEdge[];
  resolve: (s: Loaded) => void;
  reject: (e: Error) => void;
}

/** A scene, how it came, and its index when the worker built it (else the app builds it). */
export interface Loaded {
  scene: Scene;
  via: SceneVia;
  index?: SceneIndex;
}

class WorkerGone extends Error {}

export class SceneSource {
  private worker: Worker | null = null;
  private pending = new Map<number, Pending>();
  private nextId = 1;
  /** true once the worker said it runs */
  private ready = false;
  /** "worker" while the worker serves scenes, "main" after a fallback (published for tests). */
  mode: "worker" | "main" = "main";

  constructor(private readonly base: string = document.baseURI) {
    try {
      this.worker = new Worker(new URL(WORKER_PATH, base).href);
      this.worker.onmessage = (ev: MessageEvent<WorkerAnswer>) => this.receive(ev.data);
      this.worker.onerror = (ev) => {
        ev.preventDefault();
        this.fallBack();
      };
      this.mode = "worker";
    } catch {
      this.worker = null;
    }
  }

  private get pluginBase(): string {
    return new URL(".", this.base).href;
  }

  private fallBack(): void {
    this.worker?.terminate();
    this.worker = null;
    this.mode = "main";
    for (const p of this.pending.values()) p.reject(new WorkerGone("scene worker failed"));
    this.pending.clear();
  }

  private receive(m: WorkerAnswer): void {
    if (m.type === "ready") {
      this.ready = true;
      measureAbsolute("worker-boot", m.boot, m.boot);
      return;
    }
    const p = this.pending.get(m.id);
    if (!p) return;
    switch (m.type) {
      case "progress":
        p.onProgress(m.job);
        break;
      case "head":
        p.head = m.head;
        p.via = m.via;
        measureAbsolute("worker-fetch", m.timing.fetchStart, m.timing.fetchEnd);
        break;
      case "nodes":
        for (const n of m.nodes) p.nodes.push(n);
        break;
      case "edges":
        for (const e of m.edges) p.edges.push(e);
        break;
      case "done": {
        this.pending.delete(m.id);
        const { nNodes: _n, nEdges: _e, ...rest } = p.head!;
        p.resolve({ scene: { ...rest, nodes: p.nodes, edges: p.edges }, via: p.via, index: m.index });
        break;
      }
      case "error":
        this.pending.delete(m.id);
        p.reject(new api.ApiError(m.message, m.status));
        break;
    }
  }

  /**
   * The scene of `ref` with `expanded` open. `from` is the expansion state on screen: the
   * worker may then fetch only the difference (/scene_delta). `via` says how it came.
   */
  async load(
    ref: GraphRef,
    view: api.ViewOptions,
    expanded: string[],
    from: string[] | null,
    onProgress: api.ProgressFn,
    isCurrent: () => boolean,
  ): Promise<Loaded> {
    let body: ArrayBuffer | undefined;
    if (this.worker && !this.ready && from === null) {
      // the worker is still starting: do not wait for it to send the request
      const bytes = await api.fetchSceneBytes(ref, expanded, onProgress, isCurrent, view);
      if (!isCurrent()) throw new api.ApiError("superseded", 0);
      if (bytes.byteLength <= MAIN_PARSE_MAX_BYTES || !this.worker) return this.parseHere(bytes, ref, view);
      body = bytes;
    }
    if (this.worker) {
      const id = this.nextId++;
      const req: WorkerRequest = { type: "load", id, base: this.pluginBase, ref, view, expanded, from, body };
      try {
        return await new Promise((resolve, reject) => {
          this.pending.set(id, { onProgress, head: null, via: "scene", nodes: [], edges: [], resolve, reject });
          this.worker!.postMessage(req, body ? [body] : []);
        });
      } catch (e) {
        if (!(e instanceof WorkerGone)) throw e;
      }
    }
    const scene = await api.fetchScene(ref, expanded, onProgress, isCurrent, view);
    return { scene, via: "main" };
  }

  /** A small /scene answer fetched here: parsed here; the worker keeps a copy for deltas. */
  private parseHere(bytes: ArrayBuffer, ref: GraphRef, view: api.ViewOptions): Loaded {
    markOnce("scene-fetched");
    const scene = api.parseJson<Scene>(new TextDecoder().decode(bytes), 200);
    this.worker?.postMessage({ type: "seed", base: this.pluginBase, ref, view, body: bytes } satisfies WorkerRequest, [bytes]);
    return { scene, via: "first" };
  }

  /** Forget a load the app no longer wants (its answer is dropped). */
  cancel(): void {
    for (const [id, p] of this.pending) {
      this.worker?.postMessage({ type: "cancel", id } satisfies WorkerRequest);
      p.reject(new api.ApiError("superseded", 0));
    }
    this.pending.clear();
  }
}
