import { createHash } from "node:crypto";
import type { ContentStore } from "@stowage/core";

/**
 * A ContentStore over a Map, hashed by hand: what a PostgreSQL SessionStore is given in these
 * tests (blob-store is no dependency of this package; any ContentStore will do). `blobs` is the
 * Map, for a test that loses a blob.
 */
export function memoryContentStore(): ContentStore & { blobs: Map<string, Uint8Array> } {
  const blobs = new Map<string, Uint8Array>();
  return {
    blobs,
    async put(bytes) {
      const hash = createHash("sha256").update(bytes).digest("hex");
      const created = !blobs.has(hash);
      blobs.set(hash, new Uint8Array(bytes));
      return { hash, size: bytes.byteLength, created };
    },
    async get(hash) {
      const bytes = blobs.get(hash);
      return bytes ? new Uint8Array(bytes) : null;
    },
    async stat(hash) {
      const bytes = blobs.get(hash);
      return bytes ? { hash, size: bytes.byteLength, lastModified: new Date() } : null;
    },
  };
}
