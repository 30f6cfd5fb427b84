// Typed requests to the plugin's routes (all URLs relative to the plugin base).
// Every failure becomes an ApiError carrying the server's own message.
import type { GraphDiff, GraphRef, Job, Listing, NodeDataAgg, NodeDataAnswer, NodeDataListing, NodeDetails, Scene, SceneDelta, SearchAnswer,
  UploadAnswer } from "./types";

/** The user's switches that change how one graph is built; sent to every per-graph route. */
export interface ViewOptions {
  extract: boolean; // auto-extraction of high-degree nodes to side columns
  ungroup: string[]; // SeriesNode names shown as their members
  kernels?: boolean; // each group's ops grouped by their fused kernel (server `group=kernels`)
  // A graph's first load: no `expanded` is sent, so the server opens the groups that hold most of
  // the graph (its first view); the answer's `expanded` is the state from then on.
  firstView?: boolean;
}

export const DEFAULT_VIEW: ViewOptions = { extract: true, ungroup: [] };

// URLs are relative to the plugin base (the iframe's <base href>). A Web Worker resolves
// relative URLs against its own script, so it sets the base explicitly.
let base: string | null = null;
export function setBase(b: string): void {
  base = b;
}
const resolve = (url: string) => (base === null ? url : new URL(url, base).href);

export class ApiError extends Error {
  constructor(message: string, readonly status: number) {
    super(message);
  }
}

async function errorFrom(resp: Response): Promise<ApiError> {
  let text = "";
  try {
    text = await resp.text();
  } catch {
    /* body unreadable */
  }
  let message = text.trim();
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed.error === "string") message = parsed.error;
  } catch {
    /* text/plain body from TensorBoard's error middleware */
  }
  if (!message) message = resp.statusText || "request failed";
  return new ApiError(`${message} (HTTP ${resp.status})`, resp.status);
}

/** fetch, with every failure (network, 4xx/5xx) as an ApiError carrying the server's message. */
async function send(url: string, init?: RequestInit): Promise<Response> {
  let resp: Response;
  try {
    resp = await fetch(resolve(url), init);
  } catch (e) {
    throw new ApiError(`cannot reach the server: ${(e as Error).message}`, 0);
  }
  if (!resp.ok) throw await errorFrom(resp);
  return resp;
}

export function parseJson<T>(text: string, status: number): T {
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ApiError(`server answered with non-JSON: ${text.slice(0, 200)}`, status);
  }
}

async function getJson<T>(url: string, init?: RequestInit): Promise<{ status: number; body: T }> {
  const resp = await send(url, init);
  return { status: resp.status, body: parseJson<T>(await resp.text(), resp.status) };
}

export function refParams(ref: GraphRef, view: ViewOptions = DEFAULT_VIEW): URLSearchParams {
  const p = new URLSearchParams({ run: ref.run, tag: ref.tag, kind: ref.kind });
  if (ref.step !== null && ref.step !== undefined) p.set("step", String(ref.step));
  if (!view.extract) p.set("extract", "off");
  if (view.ungroup.length) p.set("ungroup", JSON.stringify([...view.ungroup].sort()));
  if (view.kernels) p.set("group", "kernels");
  return p;
}

export async function fetchListing(): Promise<Listing> {
  return (await getJson<Listing>("graphs")).body;
}

export type ProgressFn = (job: Job) => void;


const readJson = async <T>(resp: Response): Promise<T> => parseJson<T>(await resp.text(), resp.status);

/**
 * GET a route that may answer 202 Job: poll the job, reporting its stage, until the answer is
 * ready; `read` takes the final answer (JSON by default).
 */
async function getWithJob<T>(
  url: string,
  onProgress: ProgressFn,
  isCurrent: () => boolean,
  read: (resp: Response) => Promise<T> = readJson,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    const resp = await send(url);
    if (resp.status !== 202) return read(resp);
    let job = await readJson<Job>(resp);
    onProgress(job);
    while (job.state === "running") {
      if (!isCurrent()) throw new ApiError("superseded", 0);
      // Long poll: the server answers as soon as the job ends, else after 0.5 s with its stage.
      job = (await getJson<Job>(`job?id=${encodeURIComponent(job.job_id)}&wait=0.5`)).body;
      onProgress(job);
    }
    if (job.state === "failed") throw new ApiError(job.error || `failed at stage ${job.stage}`, 500);
    if (attempt > 20) throw new ApiError("the answer never became ready", 500);
  }
}

/** The `/scene` URL of an expansion state (none on a first view: the server picks it). */
function sceneUrl(ref: GraphRef, expanded: string[], view: ViewOptions): string {
  const p = refParams(ref, view);
  if (!view.firstView) p.set("expanded", JSON.stringify(expanded));
  p.set("wait", "1"); // let the server answer within 1 s before falling back to a 202 Job
  return `scene?${p}`;
}

/** GET scene; while the server answers 202 Job, poll the job and report its stage. */
export async function fetchScene(
  ref: GraphRef,
  expanded: string[],
  onProgress: ProgressFn,
  isCurrent: () => boolean = () => true,
  view: ViewOptions = DEFAULT_VIEW,
): Promise<Scene> {
  return getWithJob<Scene>(sceneUrl(ref, expanded, view), onProgress, isCurrent);
}

/** GET scene like fetchScene, but the answer as raw bytes: to parse here, or to hand to the scene worker untouched. */
export async function fetchSceneBytes(
  ref: GraphRef,
  expanded: string[],
  onProgress: ProgressFn,
  isCurrent: () => boolean = () => true,
  view: ViewOptions = DEFAULT_VIEW,
): Promise<ArrayBuffer> {
  return getWithJob(sceneUrl(ref, expanded, view), onProgress, isCurrent, (resp) => resp.arrayBuffer());
}

/** GET scene_delta: what changes from the expansion state ``from`` to ``expanded``. */
export async function fetchSceneDelta(
  ref: GraphRef,
  from: string[],
  expanded: string[],
  onProgress: ProgressFn,
  isCurrent: () => boolean = () => true,
  view: ViewOptions = DEFAULT_VIEW,
): Promise<SceneDelta> {
  const p = refParams(ref, view);
  p.set("from", JSON.stringify(from));
  p.set("expanded", JSON.stringify(expanded));
  p.set("wait", "1");
  return getWithJob<SceneDelta>(`scene_delta?${p}`, onProgress, isCurrent);
}

export async function fetchNode(ref: GraphRef, name: string, view: ViewOptions = DEFAULT_VIEW,
  cost = false): Promise<NodeDetails> {
  const p = refParams(ref, view);
  p.set("name", name);
  if (cost) p.set("cost", "on"); // its own job: details first, the cost after
  return getWithJob<NodeDetails>(`node?${p}`, () => undefined, () => true);
}

/** GET search with `pattern`: where a chain of ops `A -> * -> B` occurs (hits: each match's last op;
 * `matches`: the ops of each; `match_groups`: the groups holding them). */
export async function fetchPattern(ref: GraphRef, pattern: string, view: ViewOptions = DEFAULT_VIEW): Promise<SearchAnswer> {
  const p = refParams(ref, view);
  p.set("pattern", pattern);
  return getWithJob<SearchAnswer>(`search?${p}`, () => undefined, () => true);
}

/** GET search: `q` a regex over names, labels and op types (names alone with `namesOnly`),
 * ignoring case; `op` a substring of the op type. */
export async function fetchSearch(ref: GraphRef, q: string, op: string, view: ViewOptions = DEFAULT_VIEW,
  namesOnly = false): Promise<SearchAnswer> {
  const p = refParams(ref, view);
  p.set("q", q);
  p.set("op", op);
  if (namesOnly) p.set("names_only", "on");
  return getWithJob<SearchAnswer>(`search?${p}`, () => undefined, () => true);
}

/** GET diff: graph `ref` (B, the one drawn) against `base` (A). */
export async function fetchDiff(ref: GraphRef, base: GraphRef, onProgress: ProgressFn, view: ViewOptions = DEFAULT_VIEW): Promise<GraphDiff> {
  const p = refParams(ref, view);
  p.set("base_run", base.run);
  p.set("base_tag", base.tag);
  p.set("base_kind", base.kind);
  if (base.step !== null && base.step !== undefined) p.set("base_step", String(base.step));
  p.set("wait", "2");
  return getWithJob<GraphDiff>(`diff?${p}`, onProgress, () => true);
}

export async function upload(bytes: ArrayBuffer, filename: string): Promise<UploadAnswer> {
  return (
    await getJson<UploadAnswer>(`upload?filename=${encodeURIComponent(filename)}`, {
      method: "POST",
      headers: { "Content-Type": "application/octet-stream" },
      body: bytes,
    })
  ).body;
}

/** GET node_data_tags: every node-data tag of the logdir, and the uploaded ones. */
export async function fetchNodeDataTags(): Promise<NodeDataListing> {
  return (await getJson<NodeDataListing>("node_data_tags")).body;
}

export interface NodeDataQuery {
  run: string;
  tag: string;
  step: number | null; // null: the last
  agg: NodeDataAgg;
  node: string | null; // its history over the steps comes with the answer
}

/** GET node_data: one tag's values at one step for the nodes an expansion state shows. */
export async function fetchNodeData(ref: GraphRef, view: ViewOptions, expanded: string[], q: NodeDataQuery,
  isCurrent: () => boolean = () => true): Promise<NodeDataAnswer> {
  const p = refParams(ref, view);
  p.set("data_run", q.run);
  p.set("data_tag", q.tag);
  if (q.step !== null) p.set("data_step", String(q.step));
  p.set("agg", q.agg);
  p.set("expanded", JSON.stringify([...expanded].sort()));
  if (q.node) p.set("node", q.node);
  p.set("wait", "2");
  return getWithJob<NodeDataAnswer>(`node_data?${p}`, () => undefined, isCurrent);
}

/** POST upload_node_data: Model Explorer's node-data JSON; answers the tags it adds. */
export async function uploadNodeData(bytes: ArrayBuffer, filename: string): Promise<NodeDataListing> {
  return (
    await getJson<NodeDataListing>(`upload_node_data?filename=${encodeURIComponent(filename)}`, {
      method: "POST",
      headers: { "Content-Type": "application/octet-stream" },
      body: bytes,
    })
  ).body;
}
