// The scene worker: fetches and parses scenes off the main thread (a 53k-op scene is tens of
// MB of JSON), keeps the last scene so an expand/collapse can be answered with /scene_delta,
// and sends each scene back in chunks (see api/scene_protocol.ts), then its index for drawing
// and hit-testing (render/scene_index.ts), so the main thread does not build it. The app may hand it a
// /scene answer it fetched itself (the first scene, while this worker was starting): as a
// load (parse it and send it back) or as a seed (keep it for deltas, send nothing). Built by
// esbuild into tb_graph_plugin/static/scene_worker.js, served by the plugin's /static/* route.
import * as api from "../api/client";
import {
  EDGE_CHUNK,
  NODE_CHUNK,
  applyDelta,
  sceneKey,
  type LoadRequest,
  type WorkerAnswer,
  type WorkerRequest,
} from "../api/scene_protocol";
import type { Scene } from "../api/types";
import { indexBuffers, indexScene } from "../render/scene_index";

const scope = self as unknown as {
  postMessage(m: WorkerAnswer, transfer?: Transferable[]): void;
  onmessage: ((ev: MessageEvent<WorkerRequest>) => void) | null;
};
const now = () => performance.timeOrigin + performance.now();
let latest = 0;
let last: { key: string; scene: Scene } | null = null;

const sameList = (a: string[], b: string[]) => a.length === b.length && [...a].sort().join("\n") === [...b].sort().join("\n");
const parse = (body: ArrayBuffer) => api.parseJson<Scene>(new TextDecoder().decode(body), 200);

async function load(req: LoadRequest): Promise<void> {
  const { id } = req;
  api.setBase(req.base);
  const isCurrent = () => id === latest;
  const progress = (job: Parameters<api.ProgressFn>[0]) => isCurrent() && scope.postMessage({ id, type: "progress", job });
  const key = sceneKey(req.base, req.ref, req.view);
  const fetchStart = now();
  let scene: Scene | null = req.body ? parse(req.body) : null;
  let via: "scene" | "delta" = "scene";
  if (!scene && req.from && last && last.key === key && sameList(last.scene.expanded, req.from) && !sameList(req.from, req.expanded)) {
    try {
      const delta = await api.fetchSceneDelta(req.ref, req.from, req.expanded, progress, isCurrent, req.view);
      scene = applyDelta(last.scene, delta);
      via = "delta";
    } catch (e) {
      if ((e as Error).message === "superseded") throw e;
      scene = null; // any failure of the delta route: ask for the whole scene
    }
  }
  if (!scene) scene = await api.fetchScene(req.ref, req.expanded, progress, isCurrent, req.view);
  if (!isCurrent()) return;
  const timing = { fetchStart, fetchEnd: now() };
  last = { key, scene };
  const { nodes, edges, ...rest } = scene;
  scope.postMessage({ id, type: "head", head: { ...rest, nNodes: nodes.length, nEdges: edges.length }, via, timing });
  for (let i = 0; i < nodes.length; i += NODE_CHUNK) scope.postMessage({ id, type: "nodes", nodes: nodes.slice(i, i + NODE_CHUNK) });
  for (let i = 0; i < edges.length; i += EDGE_CHUNK) scope.postMessage({ id, type: "edges", edges: edges.slice(i, i + EDGE_CHUNK) });
  // the index is built while the main thread deserialises the chunks, then handed over
  const index = indexScene(scene);
  if (!isCurrent()) return;
  scope.postMessage({ id, type: "done", index }, indexBuffers(index));
}

scope.onmessage = (ev) => {
  const req = ev.data;
  if (req.type === "cancel") {
    if (req.id === latest) latest = 0;
    return;
  }
  if (req.type === "seed") {
    try {
      last = { key: sceneKey(req.base, req.ref, req.view), scene: parse(req.body) };
    } catch {
      last = null; // the next expand asks for the whole scene
    }
    return;
  }
  latest = req.id;
  load(req).catch((e) => {
    const err = e as api.ApiError;
    scope.postMessage({ id: req.id, type: "error", message: err.message ?? String(e), status: err.status ?? 0 });
  });
};

scope.postMessage({ id: 0, type: "ready", boot: now() });
