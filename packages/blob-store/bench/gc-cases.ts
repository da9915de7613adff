// collectGarbage over many blobs against a naive collector that lists the store and deletes what
// the roots do not name: the cost of the protocol (a move aside, a look and a delete or a move
// back per candidate where the naive one deletes, the roots read twice) at two store sizes.
import type { BenchCase } from "@stowage/bench-kit";
import { type BlobStore, collectGarbage, createBlobStore } from "@stowage/blob-store";
import { createMemoryObjectStore, type ObjectStore, sha256Hex } from "@stowage/core";

const COUNTS = [5_000, 50_000];

export function gcCases(): BenchCase[] {
  return COUNTS.map((count) => {
    let objects: ObjectStore;
    let blobs: BlobStore;
    const hashes: string[] = [];
    const bodies = Array.from({ length: count }, (_, i) => new TextEncoder().encode(`screenshot ${i}`));
    for (const body of bodies) hashes.push(sha256Hex(body));
    // Every other blob is referenced; the rest are candidates, old enough to go.
    const referenced = hashes.filter((_, i) => i % 2 === 0);
    const roots = [{ name: "sessions", refs: () => referenced }];
    return {
      name: `collectGarbage of ${count.toLocaleString("en-US")} blobs (half referenced), memory store, vs list + delete the unreferenced`,
      target: { kind: "time", max: 6 },
      units: { count, label: "ops" },
      rounds: 5,
      warmup: count < 50_000,
      async prepare() {
        objects = createMemoryObjectStore();
        blobs = createBlobStore({ store: objects });
        for (let i = 0; i < count; i++) await objects.put(hashes[i]!, bodies[i]!);
        await new Promise((resolve) => setTimeout(resolve, 2));
      },
      async ours() {
        const report = await collectGarbage({ blobs, roots, graceMs: 0, timestampSlackMs: 0 });
        if (report.deleted !== count - referenced.length) throw new Error(`deleted ${report.deleted}`);
      },
      async baseline() {
        // The roots once, the listing taken whole, then one delete per unreferenced blob.
        const keep = new Set(referenced);
        const unreferenced: string[] = [];
        for await (const item of objects.iterate({ prefix: "" }))
          if (!keep.has(item.key)) unreferenced.push(item.key);
        for (const key of unreferenced) await objects.delete(key);
      },
    } satisfies BenchCase;
  });
}
