// Messages between the app (main thread) and the scene worker (src/worker/scene_worker.ts).
// A scene travels as a head, then node and edge chunks: each chunk is a message of its own,
// so the main thread deserialises a 50k-node scene in many short tasks, not one long one. Its
// index for drawing and hit-testing (render/scene_index.ts) comes last, built in the worker.
import type { SceneIndex } from "../render/scene_index";
import type { ViewOptions } from "./client";
import type { GraphRef, Job, Scene, SceneDelta, SceneEdge, SceneNode } from "./types";

export type SceneHead = Omit<Scene, "nodes" | "edges"> & { nNodes: number; nEdges: number };

export interface LoadRequest {
  type: "load";
  id: number;
  base: string; // absolute plugin base URL: the worker resolves routes against it
  ref: GraphRef;
  view: ViewOptions;
  expanded: string[];
  /** the expansion state the app shows now; the worker may answer with /scene_delta from it */
  from: string[] | null;
  /** the /scene answer's bytes, already fetched by the app: parse these instead of fetching */
  body?: ArrayBuffer;
}

/** The scene the app fetched and parsed itself (the first one): kept for /scene_delta, no answer. */
export interface SeedRequest {
  type: "seed";
  base: string;
  ref: GraphRef;
  view: ViewOptions;
  body: ArrayBuffer; // the /scene answer's bytes
}

export interface CancelRequest {
  type: "cancel";
  id: number;
}

export type WorkerRequest = LoadRequest | SeedRequest | CancelRequest;

export type WorkerAnswer =
  | { id: 0; type: "ready"; boot: number } // the worker runs (boot: epoch ms)
  | { id: number; type: "progress"; job: Job }
  | { id: number; type: "head"; head: SceneHead; via: "scene" | "delta"; timing: WorkerTiming }
  | { id: number; type: "nodes"; nodes: SceneNode[] }
  | { id: number; type: "edges"; edges: SceneEdge[] }
  | { id: number; type: "done"; index: SceneIndex } // built while the chunks were on their way; buffers transferred
  | { id: number; type: "error"; message: string; status: number };

/** When the worker fetched (or was handed) and parsed this answer, as epoch ms (timeOrigin + now). */
export interface WorkerTiming {
  fetchStart: number;
  fetchEnd: number;
}

// small enough that deserialising a chunk takes a few ms (a 2000-node chunk took 12-20 ms)
export const NODE_CHUNK = 500;
export const EDGE_CHUNK = 250;

/** The key of the scene the worker keeps: a delta applies only to the same graph, base and view. */
export function sceneKey(base: string, ref: GraphRef, view: ViewOptions): string {
  return JSON.stringify([base, ref.run, ref.tag, ref.kind, ref.step ?? null, view.extract, [...view.ungroup].sort(), !!view.kernels]);
}

/** The scene after a delta: removed nodes dropped, upserted ones replaced or appended. */
export function applyDelta(old: Scene, d: SceneDelta): Scene {
  const removed = new Set(d.removed_nodes);
  const upserts = new Map(d.upserted_nodes.map((n) => [n.name, n]));
  const nodes: SceneNode[] = [];
  for (const n of old.nodes) {
    if (removed.has(n.name)) continue;
    const u = upserts.get(n.name);
    nodes.push(u ?? n);
    if (u) upserts.delete(n.name);
  }
  for (const n of upserts.values()) nodes.push(n);
  const stats = (d as SceneDelta & { stats?: Record<string, unknown> }).stats;
  return {
    graph: old.graph,
    expanded: d.expanded,
    nodes,
    edges: d.edges,
    width: d.width,
    height: d.height,
    stats: stats ? { ...old.stats, ...stats } : old.stats,
    version: d.version,
  };
}
