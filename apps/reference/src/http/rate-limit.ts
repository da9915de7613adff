import { StowageError } from "@stowage/core";
import { rateLimits, type StowageDatabase } from "@stowage/storage-postgres";
import { lt } from "drizzle-orm";
import { RateLimiterDrizzle, RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible";

/** Open server-sent-event streams one API key may hold in one process. */
export const DEFAULT_MAX_STREAMS_PER_KEY = 20;

/** How often expired buckets are deleted, and how long after their expiry (an hour). */
const SWEEP_EVERY_MS = 5 * 60_000;
const SWEEP_EXPIRED_FOR_MS = 60 * 60_000;

/**
 * The app's rate limits, counted in the database (PostgreSQL or PGlite), so that two processes
 * on one database share one budget per caller. Authenticated requests count against their API
 * key's id (never secret material); failed ones against the address they came from (see
 * `clientAddress`), so rotating made-up keys buys nothing. Public paths (health check, viewer,
 * signed URLs) count against nothing: a flood of bad keys cannot block them. Buckets expire with
 * their window and are never evicted to make room, so a flood of callers cannot reset anyone's
 * count.
 */
export interface RateLimits {
  /** One request of an authenticated key; RATE_LIMITED over the limit. */
  consumeKey(keyId: string): Promise<void>;
  /** One unauthenticated (or failed) request from `address`; RATE_LIMITED over the limit. */
  consumeAddress(address: string): Promise<void>;
  /**
   * RATE_LIMITED when `address` is over its limit already, without counting a request: checked
   * before a key is verified, so a blocked address costs no key-record read.
   */
  checkAddress(address: string): Promise<void>;
  /** Opens a live stream for a key; returns its release. RATE_LIMITED past the cap (per process). */
  openStream(keyId: string): () => void;
  /** Stops the sweep of expired buckets; called before the database closes. */
  close(): void;
}

export interface RateLimitsOptions {
  /** Requests a minute per key and per address. */
  perMinute: number;
  /** The database the buckets live in (its `rate_limits` table). */
  db: StowageDatabase;
  /** Default {@link DEFAULT_MAX_STREAMS_PER_KEY}. */
  maxStreamsPerKey?: number;
}

function limited(what: string, perMinute: number, msBeforeNext: number): StowageError {
  return new StowageError(
    "RATE_LIMITED",
    `rate limit of ${perMinute} requests a minute per ${what} exceeded`,
    {
      details: { retryAfterSeconds: Math.max(1, Math.ceil(msBeforeNext / 1000)) },
    },
  );
}

export function createRateLimits(options: RateLimitsOptions): RateLimits {
  const { perMinute, maxStreamsPerKey = DEFAULT_MAX_STREAMS_PER_KEY } = options;
  const limiter = (keyPrefix: string) =>
    new RateLimiterDrizzle({
      storeClient: options.db,
      schema: rateLimits,
      keyPrefix,
      points: perMinute,
      duration: 60,
      // If the database does not answer, each process keeps limiting on its own.
      insuranceLimiter: new RateLimiterMemory({ keyPrefix, points: perMinute, duration: 60 }),
      // The limiter's own sweep cannot be stopped: it went on querying a closed database (an
      // app closed in a process that lives on) and kept each closed app alive. `sweep` below.
      clearExpiredByTimeout: false,
    });
  const keys = limiter("key");
  const addresses = limiter("address");
  const streams = new Map<string, number>();
  // Buckets of callers who stopped calling: deleted an hour after they expired, as the limiter's
  // own sweep did. A failed sweep is retried at the next; the limits never depend on it.
  const sweep = setInterval(() => {
    const expired = lt(rateLimits.expire, new Date(Date.now() - SWEEP_EXPIRED_FOR_MS));
    options.db
      .delete(rateLimits)
      .where(expired)
      .catch(() => {});
  }, SWEEP_EVERY_MS);
  sweep.unref();

  async function consume(bucket: RateLimiterDrizzle, id: string, what: string): Promise<void> {
    try {
      await bucket.consume(id);
    } catch (err) {
      if (err instanceof RateLimiterRes) throw limited(what, perMinute, err.msBeforeNext);
      throw err;
    }
  }

  return {
    consumeKey: (keyId) => consume(keys, keyId, "API key"),
    consumeAddress: (address) => consume(addresses, address, "address"),
    async checkAddress(address) {
      const counted = await addresses.get(address);
      if (counted && counted.consumedPoints >= perMinute) {
        throw limited("address", perMinute, counted.msBeforeNext);
      }
    },
    openStream(keyId) {
      const open = streams.get(keyId) ?? 0;
      if (open >= maxStreamsPerKey) {
        throw new StowageError("RATE_LIMITED", `at most ${maxStreamsPerKey} live streams per API key`, {
          reason: "TOO_MANY_STREAMS",
          details: { limit: maxStreamsPerKey, retryAfterSeconds: 5 },
        });
      }
      streams.set(keyId, open + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        const left = (streams.get(keyId) ?? 1) - 1;
        if (left <= 0) streams.delete(keyId);
        else streams.set(keyId, left);
      };
    },
    close() {
      clearInterval(sweep);
    },
  };
}
