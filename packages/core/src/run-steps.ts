import { throwIfAborted } from "./abort.js";

/**
 * Work written as a generator that pauses (yields) between bounded steps, so that the same code
 * runs at once ({@link runToEnd}) or in slices that let the event loop go on ({@link runInSlices}).
 */
export type Steps<T> = Generator<void, T, void>;

/**
 * Milliseconds of work before a sliced run lets the event loop go on: a server that runs it
 * answers its other requests (a health check) within about this, plus one step.
 */
const DEFAULT_SLICE_MS = 10;

/** Runs `steps` to their end, without pausing. */
export function runToEnd<T>(steps: Steps<T>): T {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Resolves on a later turn of the event loop, after timers and I/O that were waiting. */
export const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Runs `steps` to their end, letting the event loop go on (timers, I/O, other requests) whenever
 * `sliceMs` of work have passed since it last did. ABORTED when `signal` fires between slices.
 */
export async function runInSlices<T>(
  steps: Steps<T>,
  options: { sliceMs?: number; signal?: AbortSignal | undefined; what: string },
): Promise<T> {
  const { sliceMs = DEFAULT_SLICE_MS, signal, what } = options;
  let sliceStart = performance.now();
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() - sliceStart >= sliceMs) {
      await nextTurn();
      throwIfAborted(signal, what);
      sliceStart = performance.now();
    }
  }
}
