// Typed requests to the plugin's routes (all URLs relative to the plugin base).
// Every failure becomes an ApiError carrying the server's own message.
import type { GraphRef, Job, Listing, NodeDetails, Scene, SearchAnswer, UploadAnswer } from "./types";

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

async function getJson<T>(url: string, init?: RequestInit): Promise<{ status: number; body: T }> {
  let resp: Response;
  try {
    resp = await fetch(url, init);
  } catch (e) {
    throw new ApiError(`cannot reach the server: ${(e as Error).message}`, 0);
  }
  if (!resp.ok) throw await errorFrom(resp);
  const text = await resp.text();
  try {
    return { status: resp.status, body: JSON.parse(text) as T };
  } catch {
    throw new ApiError(`server answered with non-JSON: ${text.slice(0, 200)}`, resp.status);
  }
}

export function refParams(ref: GraphRef): URLSearchParams {
  const p = new URLSearchParams({ run: ref.run, tag: ref.tag, kind: ref.kind });
  if (ref.step !== null && ref.step !== undefined) p.set("step", String(ref.step));
  return p;
}

export async function fetchListing(): Promise<Listing> {
  return (await getJson<Listing>("graphs")).body;
}

export type ProgressFn = (job: Job) => void;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** GET scene; while the server answers 202 Job, poll the job and report its stage. */
export async function fetchScene(
  ref: GraphRef,
  expanded: string[],
  onProgress: ProgressFn,
  isCurrent: () => boolean = () => true,
): Promise<Scene> {
  const p = refParams(ref);
  p.set("expanded", JSON.stringify(expanded));
  p.set("wait", "1"); // let the server answer within 1 s before falling back to a 202 Job
  const url = `scene?${p}`;
  for (let attempt = 0; ; attempt++) {
    const { status, body } = await getJson<Scene | Job>(url);
    if (status !== 202) return body as Scene;
    let job = body as Job;
    onProgress(job);
    let delay = 100;
    while (job.state === "running") {
      await sleep(delay);
      if (!isCurrent()) throw new ApiError("superseded", 0);
      delay = Math.min(delay * 1.5, 1000);
      job = (await getJson<Job>(`job?id=${encodeURIComponent(job.job_id)}`)).body;
      onProgress(job);
    }
    if (job.state === "failed") throw new ApiError(job.error || `failed at stage ${job.stage}`, 500);
    if (attempt > 20) throw new ApiError("the scene never became ready", 500);
  }
}

export async function fetchNode(ref: GraphRef, name: string): Promise<NodeDetails> {
  const p = refParams(ref);
  p.set("name", name);
  return (await getJson<NodeDetails>(`node?${p}`)).body;
}

export async function fetchSearch(ref: GraphRef, q: string, op: string): Promise<SearchAnswer> {
  const p = refParams(ref);
  p.set("q", q);
  p.set("op", op);
  return (await getJson<SearchAnswer>(`search?${p}`)).body;
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
