import { randomBytes, timingSafeEqual } from "node:crypto";
import { StowageError, sha256Hex } from "@stowage/core";
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
