import { setTimeout as wait } from "node:timers/promises";
import { throwIfAborted } from "@stowage/core";

/** Longest wait between two attempts, whatever the backoff or a Retry-After header says. */
export const MAX_RETRY_DELAY_MS = 10_000;

/** HTTP statuses worth another attempt: timeouts, rate limits and server-side failures. */
const TRANSIENT_STATUSES = new Set([408, 425, 429, 500, 502, 503, 504]);

/** True for a status worth another attempt. */
export function isTransientStatus(status: number): boolean {
  return TRANSIENT_STATUSES.has(status);
}

/**
 * Delay before attempt `attempt + 1`: exponential from `baseMs` with full jitter, or the
 * server's `Retry-After` (seconds) when it gave one; capped at {@link MAX_RETRY_DELAY_MS}.
 */
export function retryDelayMs(attempt: number, baseMs: number, retryAfter?: string | null): number {
  const seconds = retryAfter ? Number(retryAfter) : Number.NaN;
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, MAX_RETRY_DELAY_MS);
  const ceiling = Math.min(baseMs * 2 ** attempt, MAX_RETRY_DELAY_MS);
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

/** Waits `ms`, or fails with ABORTED as soon as `signal` fires. */
export async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  throwIfAborted(signal, "retry wait");
  try {
    await wait(ms, undefined, signal ? { signal } : {});
  } catch (err) {
    throwIfAborted(signal, "retry wait");
    throw err;
  }
}

/** How {@link withRetries} retries. */
export interface RetryPolicy {
  /** Extra attempts after the first. */
  retries: number;
  /** First backoff step in ms. */
  baseDelayMs: number;
  signal: AbortSignal | undefined;
  /** Whether `err` is worth another attempt, and the server's Retry-After if it gave one. */
  transient(err: unknown): { retryAfter: string | null } | undefined;
}

/** What the steps of one upload did: requests made, and how many of them were retries. */
export interface RequestCounter {
  requests: number;
  retries: number;
}

/**
 * Runs `step` up to `1 + retries` times while it fails transiently; `counter.requests` counts
 * every call of `step`, `counter.retries` every call after the first.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  counter: RequestCounter,
  step: () => Promise<T>,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    counter.requests++;
    if (attempt > 0) counter.retries++;
    try {
      return await step();
    } catch (err) {
      if (policy.signal?.aborted) throw err;
      const transient = policy.transient(err);
      if (!transient || attempt >= policy.retries) throw err;
      await sleep(retryDelayMs(attempt, policy.baseDelayMs, transient.retryAfter), policy.signal);
    }
  }
}
