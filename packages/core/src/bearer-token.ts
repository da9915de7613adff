import { StowageError } from "./errors.js";

/** Longest API key accepted before any work is done (a Stowage key is about 60 characters). */
const MAX_BEARER_TOKEN_LENGTH = 256;
const BEARER_PREFIX_LENGTH = "Bearer ".length;

/**
 * The token of an `Authorization: Bearer <token>` header (a `Headers.get()` result passes as it
 * is). Throws UNAUTHORIZED when the header is missing, uses another scheme, or is oversized.
 */
export function parseBearerToken(authorization: unknown): string {
  if (typeof authorization !== "string" || authorization.length === 0) {
    throw new StowageError(
      "UNAUTHORIZED",
      "missing Authorization header; send `Authorization: Bearer <API key>`",
    );
  }
  if (authorization.length > MAX_BEARER_TOKEN_LENGTH + BEARER_PREFIX_LENGTH) {
    throw new StowageError(
      "UNAUTHORIZED",
      `Authorization header is longer than ${MAX_BEARER_TOKEN_LENGTH + BEARER_PREFIX_LENGTH} characters`,
    );
  }
  const match = /^Bearer +([\x21-\x7e]+) *$/i.exec(authorization);
  if (!match) {
    throw new StowageError("UNAUTHORIZED", "Authorization header must be `Bearer <API key>`");
  }
  return match[1]!;
}
