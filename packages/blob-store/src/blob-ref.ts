import { describeValue, isSha256Hex, StowageError } from "@stowage/core";

/** What every blob reference starts with. */
export const BLOB_REF_PREFIX = "blob:sha256:";

/** The reference stored in session entries for a blob: `blob:sha256:<64 hex>`. */
export function formatBlobRef(hash: string): string {
  if (!isSha256Hex(hash)) {
    throw new StowageError(
      "INVALID_INPUT",
      `blob hash must be 64 lowercase hex characters, got ${describeValue(hash)}`,
    );
  }
  return BLOB_REF_PREFIX + hash;
}

/**
 * The hash inside a blob reference, or `null` when `value` is not exactly `blob:sha256:` plus 64
 * lowercase hex characters. Strict on purpose: a crafted ref must never reach a file path.
 */
export function parseBlobRef(value: unknown): string | null {
  if (typeof value !== "string" || value.length !== BLOB_REF_PREFIX.length + 64) return null;
  if (!value.startsWith(BLOB_REF_PREFIX)) return null;
  const hash = value.slice(BLOB_REF_PREFIX.length);
  return isSha256Hex(hash) ? hash : null;
}

export function isBlobRef(value: unknown): value is string {
  return parseBlobRef(value) !== null;
}

/** Accepts a bare hash or a ref and returns the hash; anything else is INVALID_INPUT. */
export function toBlobHash(hashOrRef: unknown): string {
  if (isSha256Hex(hashOrRef)) return hashOrRef;
  const hash = parseBlobRef(hashOrRef);
  if (hash === null) {
    throw new StowageError(
      "INVALID_INPUT",
      `expected a blob hash (64 lowercase hex) or a "blob:sha256:<hash>" ref, got ${describeValue(hashOrRef)}`,
    );
  }
  return hash;
}
