import { sha256Hex } from "@stowage/core";
import type { ApiKeys, VerifiedApiKey } from "@stowage/tenancy/shared";
import { LRUCache } from "lru-cache";

/** Keys kept as verified, per process: every agent of a busy replica (as `recent-keys.ts`). */
const MAX_VERIFIED_KEYS = 10_000;

/**
 * `apiKeys` whose successful verifications are kept for `ttlMs` (by the key's SHA-256, never the
 * key): every request verifies its key, and on S3 each verification is one GET of the key's
 * record — under load the most frequent read of the shared store (a third of them in
 * `pnpm load`). Only a key that verified is kept: an unknown key is read each time (it is rate
 * limited by address), and a key issued a moment ago works at once. A key revoked through these
 * `apiKeys` (this process) is forgotten at once; one revoked elsewhere (`stowage keys revoke`,
 * another replica) stops working here within `ttlMs`. `ttlMs` 0 keeps nothing.
 */
export function cacheVerifiedKeys(apiKeys: ApiKeys, ttlMs: number): ApiKeys {
  if (ttlMs <= 0) return apiKeys;
  const verified = new LRUCache<string, VerifiedApiKey>({ max: MAX_VERIFIED_KEYS, ttl: ttlMs });
  // A verification that read the record before a revocation here must not keep the key after it.
  let revocations = 0;
  const verify: ApiKeys["verify"] = async (apiKey, options) => {
    if (typeof apiKey !== "string") return apiKeys.verify(apiKey, options);
    const hash = sha256Hex(apiKey);
    const kept = verified.get(hash);
    // Copies both ways: what a caller does with its answer never reaches the next request.
    if (kept) return copyOf(kept);
    const before = revocations;
    const result = await apiKeys.verify(apiKey, options);
    if (result && before === revocations) verified.set(hash, copyOf(result));
    return result;
  };
  return {
    issue: (principal, options) => apiKeys.issue(principal, options),
    verify,
    authenticate: async (apiKey, options) => (await verify(apiKey, options))?.principal ?? null,
    async revoke(id, options) {
      const forget = () => {
        revocations += 1;
        for (const [hash, key] of verified.entries()) if (key.keyId === id) verified.delete(hash);
      };
      // Before and after: a verification that read the record while it was being deleted is not kept.
      forget();
      try {
        await apiKeys.revoke(id, options);
      } finally {
        forget();
      }
    },
  };
}

function copyOf(key: VerifiedApiKey): VerifiedApiKey {
  return { keyId: key.keyId, principal: { kind: key.principal.kind, id: key.principal.id } };
}
