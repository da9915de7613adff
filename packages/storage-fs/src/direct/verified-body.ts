import { createHash } from "node:crypto";
import { StowageError } from "@stowage/core";
import { forbidden } from "./signature.js";

/**
 * Counts and hashes an upload as it streams; errors (so that nothing is published) when the body
 * is longer or shorter than signed, or does not hash to the signed SHA-256, or when `beforeEnd`
 * (awaited once the whole body has arrived) throws.
 */
export function verifiedBody(
  body: ReadableStream<Uint8Array> | null,
  length: number,
  sha256: string | undefined,
  beforeEnd?: () => Promise<void>,
): ReadableStream<Uint8Array> {
  const hash = createHash("sha256");
  let received = 0;
  const check = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      received += chunk.byteLength;
      if (received > length) {
        controller.error(forbidden(`upload is longer than the signed ${length} bytes`, "LENGTH_MISMATCH"));
        return;
      }
      hash.update(chunk);
      controller.enqueue(chunk);
    },
    flush(controller) {
      if (received !== length) {
        controller.error(
          forbidden(`upload has ${received} bytes, the URL was signed for ${length}`, "LENGTH_MISMATCH"),
        );
        return;
      }
      const actual = hash.digest("hex");
      if (sha256 !== undefined && actual !== sha256) {
        controller.error(
          new StowageError("INTEGRITY", `upload hashes to ${actual}, the URL was signed for ${sha256}`, {
            details: { expected: sha256, actual },
          }),
        );
        return;
      }
      // The last word before the file is published (the store renames it into place after this).
      return beforeEnd?.().catch((err: unknown) => controller.error(err));
    },
  });
  return (body ?? new ReadableStream({ start: (c) => c.close() })).pipeThrough(check);
}
