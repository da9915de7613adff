import { randomBytes, timingSafeEqual } from "node:crypto";
import { type OperationOptions, StowageError, sha256Hex } from "@stowage/core";
import { z } from "zod";
import { invalidValue, SHA256_HEX } from "../schemas/schemas.js";
import { parseJson } from "../text/utf8.js";
import { claimKey, type StoreContext } from "./hot-state-versions.js";

// A session's claim is one create-only object holding the SHA-256 of its token. It is created
// once and removed only by the holder of its token (a release, or the deletion of the session):
// nothing else rewrites it, so a claim seen held by a token stays held until that holder lets go.

/** Random bytes in a dispatcher token (256 bits): nothing to guess. */
const DISPATCHER_TOKEN_BYTES = 32;
/** Longest token compared; anything longer is wrong without hashing it. */
const MAX_DISPATCHER_TOKEN_LENGTH = 256;

/** The stored claim: the SHA-256 of the token, never the token. */
const ClaimSchema = z.strictObject({
  type: z.literal("hot_state_dispatcher"),
  session_id: z.string(),
  token_sha256: z.string().regex(SHA256_HEX),
  claimed_at: z.iso.datetime(),
});

/** Who holds a session's claim, as seen by the holder of a token: nobody, that token, or another. */
export type ClaimHolding = "unclaimed" | "held" | "other";

/** Whether `token` is the one the stored `claim` was made with; INTEGRITY when the claim is damaged. */
function claimHeldBy(claim: Uint8Array, sessionId: string, token: unknown): boolean {
  const parsed = ClaimSchema.safeParse(parseJson(claim)).data;
  if (parsed?.session_id !== sessionId) {
    const message = `the dispatcher claim of hot state ${sessionId} is damaged`;
    throw new StowageError("INTEGRITY", message, { details: { sessionId } });
  }
  if (typeof token !== "string" || token.length === 0 || token.length > MAX_DISPATCHER_TOKEN_LENGTH)
    return false;
  // Hashes of equal length compared in constant time: the token's bytes are never compared directly.
  return timingSafeEqual(Buffer.from(sha256Hex(token), "hex"), Buffer.from(parsed.token_sha256, "hex"));
}

/** FORBIDDEN (`NOT_DISPATCHER`): what a token that does not hold the session's claim is refused with. */
export function notDispatcher(sessionId: string, claimed: boolean, doing: string): StowageError {
  const message = claimed
    ? `only the dispatcher of hot state ${sessionId} ${doing}: the token is missing or wrong`
    : `hot state ${sessionId} has no claimed dispatcher, so no token is accepted for it`;
  return new StowageError("FORBIDDEN", message, { reason: "NOT_DISPATCHER", details: { sessionId } });
}

/** INVALID_INPUT unless `token` is absent or a non-empty string. */
export function assertTokenShape(token: unknown): asserts token is string | undefined {
  if (token === undefined || (typeof token === "string" && token.length > 0)) return;
  throw invalidValue("dispatcher token must be the string claimDispatcher returned", token);
}

export async function claimHolding(ctx: StoreContext, session: string, token: unknown, op: OperationOptions) {
  const claim = await ctx.store.get(claimKey(ctx, session), op);
  if (claim === null) return "unclaimed";
  return claimHeldBy(claim, session, token) ? "held" : "other";
}

/** FORBIDDEN unless `token` holds the session's claim, or there is no claim and no token. */
export async function assertDispatcher(
  ctx: StoreContext,
  session: string,
  token: unknown,
  op: OperationOptions,
) {
  const holding = await claimHolding(ctx, session, token, op);
  if (holding === "held" || (holding === "unclaimed" && token === undefined)) return;
  throw notDispatcher(session, holding === "other", "writes it");
}

const claimedAlready = (sessionId: string, cause?: unknown) =>
  new StowageError("CONFLICT", `the dispatcher of hot state ${sessionId} was claimed already`, {
    ...{ cause, reason: "DISPATCHER_CLAIMED", details: { sessionId } },
  });

/** A new claim's token; the holder claiming again (a retry) is told its claim stands. */
export async function claimSession(ctx: StoreContext, session: string, op: OperationOptions, token?: string) {
  if (token !== undefined) {
    const holding = await claimHolding(ctx, session, token, op);
    if (holding === "held") return token;
    if (holding === "unclaimed") throw notDispatcher(session, false, "claims it again");
    throw claimedAlready(session);
  }
  const fresh = randomBytes(DISPATCHER_TOKEN_BYTES).toString("base64url");
  const claim: z.infer<typeof ClaimSchema> = {
    ...{ type: "hot_state_dispatcher", session_id: session, token_sha256: sha256Hex(fresh) },
    claimed_at: ctx.now().toISOString(),
  };
  const put = { ...op, ifNoneMatch: "*" as const, contentType: "application/json" };
  try {
    await ctx.store.put(claimKey(ctx, session), new TextEncoder().encode(JSON.stringify(claim)), put);
  } catch (err) {
    if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
    throw claimedAlready(session, err);
  }
  return fresh;
}
