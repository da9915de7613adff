import { randomBytes, timingSafeEqual } from "node:crypto";
import {
  describeValue,
  type ObjectStore,
  type OperationOptions,
  StowageError,
  sha256Hex,
} from "@stowage/core";
import { z } from "zod";

/** Random bytes in a dispatcher token (256 bits): nothing to guess. */
const DISPATCHER_TOKEN_BYTES = 32;
/** Longest token compared; anything longer is wrong without hashing it. */
const MAX_DISPATCHER_TOKEN_LENGTH = 256;

/** The stored claim: the SHA-256 of the token, never the token. */
const ClaimSchema = z.strictObject({
  type: z.literal("hot_state_dispatcher"),
  session_id: z.string(),
  token_sha256: z.string().regex(/^[a-f0-9]{64}$/),
  claimed_at: z.iso.datetime(),
});

/** A new dispatcher token (base64url, 43 characters). */
export function newDispatcherToken(): string {
  return randomBytes(DISPATCHER_TOKEN_BYTES).toString("base64url");
}

/** The bytes of the claim of `sessionId` by the holder of `token`. */
export function encodeClaim(sessionId: string, token: string, claimedAt: Date): Uint8Array {
  const claim: z.infer<typeof ClaimSchema> = {
    type: "hot_state_dispatcher",
    session_id: sessionId,
    token_sha256: sha256Hex(token),
    claimed_at: claimedAt.toISOString(),
  };
  return new TextEncoder().encode(JSON.stringify(claim));
}

/** Whether `token` is the one `claim` (stored bytes) was made with; INTEGRITY when the claim is damaged. */
export function claimHeldBy(claim: Uint8Array, sessionId: string, token: unknown): boolean {
  let parsed: z.infer<typeof ClaimSchema>;
  try {
    parsed = ClaimSchema.parse(JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(claim)));
  } catch {
    throw new StowageError("INTEGRITY", `the dispatcher claim of hot state ${sessionId} is damaged`, {
      details: { sessionId },
    });
  }
  if (parsed.session_id !== sessionId) {
    throw new StowageError(
      "INTEGRITY",
      `the dispatcher claim of hot state ${sessionId} names another session`,
      {
        details: { sessionId },
      },
    );
  }
  if (typeof token !== "string" || token.length === 0 || token.length > MAX_DISPATCHER_TOKEN_LENGTH)
    return false;
  // Hashes of equal length compared in constant time: the token's bytes are never compared directly.
  return timingSafeEqual(Buffer.from(sha256Hex(token), "hex"), Buffer.from(parsed.token_sha256, "hex"));
}

/** Who holds a session's claim, as seen by the holder of a token: nobody, that token, or another. */
export type ClaimHolding = "unclaimed" | "held" | "other";

/** FORBIDDEN (`NOT_DISPATCHER`): what a token that does not hold the session's claim is refused with. */
export function notDispatcher(sessionId: string, claimed: boolean, doing: string): StowageError {
  return new StowageError(
    "FORBIDDEN",
    claimed
      ? `only the dispatcher of hot state ${sessionId} ${doing}: the token is missing or wrong`
      : `hot state ${sessionId} has no claimed dispatcher, so no token is accepted for it`,
    { reason: "NOT_DISPATCHER", details: { sessionId } },
  );
}

/** INVALID_INPUT unless `token` is absent or a non-empty string. */
export function assertTokenShape(token: unknown): asserts token is string | undefined {
  if (token !== undefined && (typeof token !== "string" || token.length === 0)) {
    throw new StowageError(
      "INVALID_INPUT",
      `dispatcher token must be the string claimDispatcher returned, got ${describeValue(token)}`,
    );
  }
}

/** Where claims are kept and the clock they are stamped with. */
export interface DispatcherClaimsOptions {
  store: ObjectStore;
  claimKey: (sessionId: string) => string;
  now: () => Date;
}

/** Claiming, confirming and releasing a session's dispatcher role; see `createDispatcherClaims`. */
export interface DispatcherClaims {
  holding(sessionId: string, token: unknown, op: OperationOptions): Promise<ClaimHolding>;
  claim(sessionId: string, token: string | undefined, op: OperationOptions): Promise<string>;
  release(sessionId: string, token: unknown, op: OperationOptions): Promise<void>;
}

/**
 * A session's claim is one create-only object holding the SHA-256 of its token. It is created
 * once and removed only by the holder of its token (a release, or the deletion of the session):
 * nothing else rewrites it, so a claim seen held by a token stays held until that holder lets go.
 */
export function createDispatcherClaims(options: DispatcherClaimsOptions): DispatcherClaims {
  const { store, claimKey, now } = options;

  async function holding(sessionId: string, token: unknown, op: OperationOptions): Promise<ClaimHolding> {
    const claim = await store.get(claimKey(sessionId), op);
    if (claim === null) return "unclaimed";
    return claimHeldBy(claim, sessionId, token) ? "held" : "other";
  }

  return {
    holding,

    async claim(sessionId, token, op) {
      // The holder claiming again (a retry) is told its claim stands; nobody else takes it over.
      if (token !== undefined) {
        const held = await holding(sessionId, token, op);
        if (held === "held") return token;
        if (held === "unclaimed") throw notDispatcher(sessionId, false, "claims it again");
        throw claimedAlready(sessionId);
      }
      const fresh = newDispatcherToken();
      try {
        await store.put(claimKey(sessionId), encodeClaim(sessionId, fresh, now()), {
          ...op,
          ifNoneMatch: "*",
          contentType: "application/json",
        });
      } catch (err) {
        if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
        throw claimedAlready(sessionId, err);
      }
      return fresh;
    },

    async release(sessionId, token, op) {
      const held = await holding(sessionId, token, op);
      if (held !== "held") throw notDispatcher(sessionId, held === "other", "releases its claim");
      await store.delete(claimKey(sessionId), op.signal ? { signal: op.signal } : {});
    },
  };
}

function claimedAlready(sessionId: string, cause?: unknown): StowageError {
  return new StowageError("CONFLICT", `the dispatcher of hot state ${sessionId} was claimed already`, {
    ...(cause === undefined ? {} : { cause }),
    reason: "DISPATCHER_CLAIMED",
    details: { sessionId },
  });
}
