// Content-addressed blobs against npm's cacache, the content-addressed store a Node user would
// pick: puts (cacache writes content + an index entry) and verified gets by digest.
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { BenchCase } from "@stowage/bench-kit";
import { type BlobStore, createBlobStore } from "@stowage/blob-store";
import { createFsObjectStore } from "@stowage/storage-fs";
import cacache from "cacache";

const COUNT = 2_000;
const BYTES = 4 * 1024;

export function cacacheCases(base: string): BenchCase[] {
  const bodies = Array.from({ length: COUNT }, () => new Uint8Array(BYTES));
  let round = 0;
  // New content every run: no put is a dedup hit on either side.
  const stamp = () => {
    round++;
    for (let i = 0; i < COUNT; i++) new DataView(bodies[i]!.buffer).setUint32(0, round * COUNT + i);
  };
  let directory = "";
  let blobs: BlobStore;
  let cache = "";
  const fresh = async (fsync: boolean) => {
    stamp();
    if (directory) await rm(directory, { recursive: true, force: true });
    directory = join(base, `cacache-${round}`);
    await mkdir(directory, { recursive: true });
    blobs = createBlobStore({ store: createFsObjectStore({ root: join(directory, "ours"), fsync }) });
    cache = join(directory, "cacache");
  };

  const readDir = join(base, "cacache-read");
  const readBlobs = createBlobStore({ store: createFsObjectStore({ root: join(readDir, "ours") }) });
  const readCache = join(readDir, "cacache");
  const hashes: string[] = [];
  const integrities: string[] = [];

  const putCase = (fsync: boolean): BenchCase => ({
    name: `${COUNT.toLocaleString("en-US")} blob puts of 4 KiB (fsync ${fsync ? "on" : "off"}) vs cacache.put`,
    target: { kind: "speed", min: 1.0 },
    units: { count: COUNT, label: "ops" },
    rounds: 5,
    warmup: false,
    prepare: () => fresh(fsync),
    async ours() {
      for (const body of bodies) await blobs.put(body);
    },
    async baseline() {
      for (let i = 0; i < COUNT; i++) await cacache.put(cache, `k-${i}`, bodies[i]!);
    },
    cleanup: () => rm(directory, { recursive: true, force: true }),
  });

  return [
    putCase(false),
    putCase(true),
    {
      name: `${COUNT.toLocaleString("en-US")} verified gets of 4 KiB blobs vs cacache.get.byDigest`,
      target: { kind: "speed", min: 1.0 },
      units: { count: COUNT, label: "ops" },
      rounds: 7,
      async prepare() {
        if (hashes.length > 0) return;
        stamp();
        for (let i = 0; i < COUNT; i++) {
          hashes.push((await readBlobs.put(bodies[i]!)).hash);
          integrities.push((await cacache.put(readCache, `k-${i}`, bodies[i]!)) as string);
        }
      },
      async ours() {
        for (const hash of hashes) await readBlobs.get(hash);
      },
      async baseline() {
        for (const integrity of integrities) await cacache.get.byDigest(readCache, integrity);
      },
    },
  ];
}
