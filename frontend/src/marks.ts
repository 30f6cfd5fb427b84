// The first load's milestones as performance marks, for the bench, the first-paint probe and
// devtools: gx:module (bundle evaluated), gx:listing (/graphs answered), gx:scene (the first
// scene arrived from the worker or the main thread), gx:model (indexed), gx:paint (first frame
// that drew nodes). The scene worker's own fetch and parse come as measures (gx:worker-fetch,
// gx:worker-parse) from the absolute times it sends. Each mark is left once per page.
const done = new Set<string>();

export function markOnce(name: string): void {
  if (done.has(name)) return;
  done.add(name);
  performance.mark(`gx:${name}`);
}

/** A measure of work timed in another context (the worker), from absolute epoch times. */
export function measureAbsolute(name: string, startAbs: number, endAbs: number): void {
  if (done.has(name)) return;
  done.add(name);
  const o = performance.timeOrigin;
  performance.measure(`gx:${name}`, { start: Math.max(0, startAbs - o), end: Math.max(0, endAbs - o) });
}
