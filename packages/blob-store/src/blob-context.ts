import { formatBlobRef, type ObjectStore } from "@stowage/core";
import type { createBlobKeys } from "./blob-layout.js";
import type { BlobInfo } from "./blob-store.js";

/** What the operations of one blob store share: its ObjectStore, its keys and how it reads and writes. */
export interface BlobContext {
  objects: ObjectStore;
  keys: ReturnType<typeof createBlobKeys>;
  /** Re-hash every `get` and `stream` (`BlobStoreOptions.verifyReads`). */
  verifyReads: boolean;
  /**
   * Puts write a touch record instead of touching: the store's `move` restamps (S3), so a
   * timestamp tells a collection nothing (see blob-writes.ts).
   */
  recordsTouches: boolean;
}

export function blobInfo(hash: string, size: number, lastModified: Date): BlobInfo {
  return { hash, ref: formatBlobRef(hash), size, lastModified };
}
