// Cooperative time slicing for long loops on the main thread: a loop asks `due()` every few
// hundred iterations and, when its slice ran past the budget, awaits `yield()`, which lets the
// browser paint and handle input before the loop goes on. No slice runs much over the budget,
// so the page never shows a long task (> 50 ms) for work split this way.

export class Superseded extends Error {
  constructor() {
    super("superseded");
  }
}

const channel = typeof MessageChannel !== "undefined" ? new MessageChannel() : null;
const waiting: (() => void)[] = [];
if (channel) channel.port1.onmessage = () => waiting.shift()?.();

/** Resolves in a new task (a MessageChannel message: no 4 ms clamp like nested setTimeout). */
export function nextTask(): Promise<void> {
  return new Promise((resolve) => {
    if (!channel) {
      setTimeout(resolve, 0);
      return;
    }
    waiting.push(resolve);
    channel.port2.postMessage(0);
  });
}

/** The budget of a slice of main-thread work: small enough that a garbage collection landing in
 * the same task (20-35 ms measured on a loaded 2-core machine while a 90k-node scene arrives)
 * still leaves the task under 50 ms. */
export const SLICE_MS = 8;

export class Slicer {
  private t0 = performance.now();
  /** how many times this slicer gave the event loop a turn */
  yields = 0;

  constructor(
    readonly budgetMs = SLICE_MS,
    private readonly isCurrent: () => boolean = () => true,
  ) {}

  due(): boolean {
    return performance.now() - this.t0 > this.budgetMs;
  }

  /** Gives the event loop a turn; throws Superseded when the work is no longer wanted. */
  async yield(): Promise<void> {
    await nextTask();
    this.yields++;
    this.t0 = performance.now();
    if (!this.isCurrent()) throw new Superseded();
  }

  /** `await s.tick()` in a loop: yields only when the slice is over budget. */
  async tick(): Promise<void> {
    if (this.due()) await this.yield();
  }
}

/** A Slicer that never yields: the same code runs synchronously (worker, tests, tiny scenes). */
export const NO_SLICING = new Slicer(Infinity);
