import { StowageError } from "@stowage/core";
import type { Context, MiddlewareHandler } from "hono";

/** Buckets kept before the oldest are forgotten, so a flood of distinct callers cannot grow memory. */
export const MAX_RATE_LIMIT_BUCKETS = 10_000;

interface Bucket {
  tokens: number;
  updated: number;
}

/**
 * A token bucket per caller (its API key when it sends one, else its address): `perMinute`
 * requests a minute on average, bursts up to the same number. Over the limit: 429 with
 * `retry-after`.
 */
export function rateLimit(perMinute: number, callerOf: (c: Context) => string): MiddlewareHandler {
  const buckets = new Map<string, Bucket>();
  const refillPerMs = perMinute / 60_000;
  return async (c, next) => {
    const caller = callerOf(c);
    const now = Date.now();
    const bucket = buckets.get(caller) ?? { tokens: perMinute, updated: now };
    bucket.tokens = Math.min(perMinute, bucket.tokens + (now - bucket.updated) * refillPerMs);
    bucket.updated = now;
    buckets.delete(caller);
    buckets.set(caller, bucket); // most recently used last
    if (buckets.size > MAX_RATE_LIMIT_BUCKETS) buckets.delete(buckets.keys().next().value!);
    if (bucket.tokens < 1) {
      const retryAfter = Math.ceil((1 - bucket.tokens) / refillPerMs / 1000);
      c.header("retry-after", String(retryAfter));
      const error = new StowageError("UNAVAILABLE", `rate limit of ${perMinute} requests a minute exceeded`, {
        reason: "RATE_LIMITED",
        details: { retryAfterSeconds: retryAfter },
      });
      return c.json({ error: error.toJSON() }, 429);
    }
    bucket.tokens -= 1;
    await next();
  };
}
