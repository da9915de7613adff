import { describeValue, isSha256Hex, parseBlobRef, StowageError } from "@stowage/core";

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
