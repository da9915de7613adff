// A put of bytes already stored compares them with the stored copy (a same-size corrupted copy is
// repaired), then refreshes its timestamp. Baseline: the least an idempotent content store that
// also repairs must do, hash the bytes and write them again under their hash.
import type { BenchCase } from "@stowage/bench-kit";
import { type BlobStore, createBlobStore } from "@stowage/blob-store";
import { createMemoryObjectStore, sha256Hex } from "@stowage/core";

const KIB = 1024;
/** Sizes from a small tool image to a large screenshot: how the cost grows with size. */
const SIZES = [4 * KIB, 256 * KIB, 4 * 1024 * KIB];
/** Bytes put per run at every size, so that runs take comparable time. */
const BYTES_PER_RUN = 64 * 1024 * KIB;

function noise(size: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(size);
  let state = seed;
  for (let i = 0; i < size; i++) {
    state = (state * 1103515245 + 12345) >>> 0;
    bytes[i] = state >>> 24;
  }
  return bytes;
}

export function dedupPutCases(): BenchCase[] {
  return SIZES.map((size) => {
    const count = Math.max(1, Math.floor(BYTES_PER_RUN / size));
    // A handful of distinct blobs, each put many times: every put but the first is a dedup hit.
    const bodies = Array.from({ length: Math.min(count, 16) }, (_, i) => noise(size, i + 1));
    const objects = createMemoryObjectStore();
    const blobs: BlobStore = createBlobStore({ store: objects });
    const label = size >= 1024 * KIB ? `${size / 1024 / KIB} MiB` : `${size / KIB} KiB`;
    return {
      name: `${count.toLocaleString("en-US")} puts of ${label} already stored (compare + touch), memory store, vs sha256 + rewrite`,
      target: { kind: "time", max: 2 },
      units: { count: count * size, label: "B" },
      rounds: 7,
      async prepare() {
        for (const body of bodies) await blobs.put(body);
      },
      async ours() {
        for (let i = 0; i < count; i++) {
          const result = await blobs.put(bodies[i % bodies.length]!);
          if (result.created) throw new Error("a dedup put reported a new blob");
        }
      },
      async baseline() {
        for (let i = 0; i < count; i++) {
          const body = bodies[i % bodies.length]!;
          await objects.put(sha256Hex(body), body);
        }
      },
    } satisfies BenchCase;
  });
}
