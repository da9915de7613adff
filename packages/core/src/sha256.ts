import { createHash } from "node:crypto";
import { describeValue } from "./describe-value.js";
import { StowageError } from "./errors.js";

/** A SHA-256 digest as stored and referenced everywhere: 64 lowercase hex characters. */
const SHA256_HEX_PATTERN = /^[a-f0-9]{64}$/;

export function isSha256Hex(value: unknown): value is string {
  return typeof value === "string" && SHA256_HEX_PATTERN.test(value);
}

/** Throws INVALID_INPUT unless `value` is 64 lowercase hex characters. */
export function assertSha256Hex(value: unknown, what = "sha256"): asserts value is string {
  if (!isSha256Hex(value)) {
    throw new StowageError(
      "INVALID_INPUT",
      `${what} must be 64 lowercase hex characters, got ${describeValue(value)}`,
    );
  }
}

/** Hex SHA-256 of bytes (or of a string's UTF-8), the id of everything content-addressed. */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}
