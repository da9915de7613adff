import { sha256Hex } from "@stowage/core";
import { LRUCache } from "lru-cache";

/** Keys remembered as recently valid, per process: enough for every agent of a busy replica. */
const MAX_RECENT_KEYS = 10_000;
/** How long a key that verified is remembered. */
const RECENT_KEY_MS = 10 * 60_000;

/**
 * The API keys that verified recently in this process, by their SHA-256 (never the key). When an
 * address is over its limit, its requests carrying one of these are still verified, so a flood of
 * made-up keys from an address (or from everyone behind a proxy) cannot lock out the valid keys
 * there; every other request from it is refused without a read of a key record, as before.
 * Remembering a key only lets it be verified again: a revoked key fails its verification.
 */
export interface RecentKeys {
  remember(apiKey: string): void;
  has(apiKey: string): boolean;
}

export function createRecentKeys(): RecentKeys {
  const recent = new LRUCache<string, true>({ max: MAX_RECENT_KEYS, ttl: RECENT_KEY_MS });
  return {
    remember: (apiKey) => recent.set(sha256Hex(apiKey), true),
    has: (apiKey) => recent.has(sha256Hex(apiKey)),
  };
}
