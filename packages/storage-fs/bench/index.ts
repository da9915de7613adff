// Benchmarks of the file-system backend, measured in the same run: under the blob store against
// the raw node:fs + node:crypto operation doing the same work, then against the peer libraries a
// user would pick instead (unstorage, write-file-atomic, cacache).
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, open, readFile, rename, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runBenchmarks } from "@stowage/bench-kit";
import { type BlobStore, createBlobStore } from "@stowage/blob-store";
import { createFsObjectStore } from "@stowage/storage-fs";
import { cacacheCases } from "./cacache-cases.js";
import { listingCases } from "./listing-cases.js";
import { putCases } from "./put-cases.js";

const BIG_BYTES = 64 * 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;
// 2,000: fsync'd puts cost ~1–3 ms each on a VM disk, and the bench must fit in a few minutes.
const SMALL_COUNT = 2_000;
const SMALL_BYTES = 4 * 1024;
/** Writers at once in the concurrent case, as when a session's images are persisted together. */
const PARALLEL = 8;

/** Runs `work(0 … count-1)` with PARALLEL calls in flight. */
async function inParallel(count: number, work: (index: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

const base = await mkdtemp(join(tmpdir(), "stowage-fs-bench-"));
let generation = 0;
const fresh = (name: string) => join(base, `${name}-${generation++}`);

/** The raw baseline: hash while writing a temp file, fsync, close, rename into place. */
async function rawPut(directory: string, chunks: Iterable<Uint8Array>, tempName: string): Promise<string> {
  const hash = createHash("sha256");
  const temp = join(directory, tempName);
  const handle = await open(temp, "wx");
  for (const chunk of chunks) {
    hash.update(chunk);
    await handle.write(chunk);
  }
  await handle.sync();
  await handle.close();
  const digest = hash.digest("hex");
  await rename(temp, join(directory, digest));
  return digest;
}

function chunksOf(bytes: Uint8Array): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let offset = 0; offset < bytes.byteLength; offset += CHUNK_BYTES) {
    chunks.push(bytes.subarray(offset, offset + CHUNK_BYTES));
  }
  return chunks;
}

function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let index = 0;
  return new ReadableStream({
    pull(controller) {
      if (index === chunks.length) controller.close();
      else controller.enqueue(chunks[index++]!);
    },
  });
}

async function emptyDirectory(name: string): Promise<string> {
  const dir = fresh(name);
  await mkdir(dir, { recursive: true });
  return dir;
}

// Each run writes new content (a counter in the first bytes), so no put is a dedup hit.
const big = new Uint8Array(BIG_BYTES).map((_, i) => (i * 31) % 251);
const bigChunks = chunksOf(big);
const bigView = new DataView(big.buffer);
let bigDir = "";
let bigBlobs: BlobStore;

const small = Array.from({ length: SMALL_COUNT }, (_, i) => new Uint8Array(SMALL_BYTES).fill(i % 251));
const stamp = (round: number) => {
  for (let i = 0; i < SMALL_COUNT; i++) new DataView(small[i]!.buffer).setUint32(0, round * SMALL_COUNT + i);
};
let smallDir = "";
let smallBlobs: BlobStore;

// The read case reads 10,000 blobs written once.
const readDir = await emptyDirectory("read");
const readBlobs = createBlobStore({ store: createFsObjectStore({ root: readDir }) });
stamp(1_000_000);
const readHashes: string[] = [];
for (const bytes of small) readHashes.push((await readBlobs.put(bytes)).hash);
const readPaths = readHashes.map((hash) => join(readDir, hash));

let round = 0;

/** Before each run of a small-put case: new content (no dedup hits) in an empty directory. */
async function freshSmallPuts(): Promise<void> {
  stamp(++round);
  if (smallDir) await rm(smallDir, { recursive: true, force: true });
  smallDir = await emptyDirectory("small");
  smallBlobs = createBlobStore({ store: createFsObjectStore({ root: smallDir }) });
}
await runBenchmarks("@stowage/storage-fs (under @stowage/blob-store)", [
  {
    name: "blob put of 64 MiB from a stream (64 KiB chunks) vs sha256 + write temp + fsync + rename",
    target: { kind: "speed", min: 0.8 },
    units: { count: BIG_BYTES, label: "B" },
    rounds: 5,
    async prepare() {
      bigView.setUint32(0, ++round);
      if (bigDir) await rm(bigDir, { recursive: true, force: true });
      bigDir = await emptyDirectory("big");
      bigBlobs = createBlobStore({ store: createFsObjectStore({ root: bigDir }) });
    },
    ours: () => bigBlobs.put(streamOf(bigChunks)),
    baseline: () => rawPut(bigDir, bigChunks, "raw.tmp"),
  },
  {
    name: `${SMALL_COUNT.toLocaleString("en-US")} puts of 4 KiB distinct blobs vs sha256 + write temp + fsync + rename`,
    target: { kind: "speed", min: 0.7 },
    units: { count: SMALL_COUNT, label: "ops" },
    rounds: 3,
    warmup: false,
    prepare: freshSmallPuts,
    async ours() {
      for (const bytes of small) await smallBlobs.put(bytes);
    },
    async baseline() {
      for (let i = 0; i < SMALL_COUNT; i++) await rawPut(smallDir, [small[i]!], `raw-${i}.tmp`);
    },
  },
  {
    name: `${SMALL_COUNT.toLocaleString("en-US")} puts of 4 KiB distinct blobs, ${PARALLEL} at a time, vs the same baseline ${PARALLEL} at a time`,
    target: { kind: "speed", min: 0.7 },
    units: { count: SMALL_COUNT, label: "ops" },
    rounds: 3,
    warmup: false,
    prepare: freshSmallPuts,
    ours: () => inParallel(SMALL_COUNT, (i) => smallBlobs.put(small[i]!)),
    baseline: () => inParallel(SMALL_COUNT, (i) => rawPut(smallDir, [small[i]!], `raw-${i}.tmp`)),
  },
  {
    name: `${SMALL_COUNT.toLocaleString("en-US")} gets of 4 KiB blobs (hash verified) vs raw readFile`,
    target: { kind: "speed", min: 0.9 },
    units: { count: SMALL_COUNT, label: "ops" },
    rounds: 7,
    async ours() {
      for (const hash of readHashes) await readBlobs.get(hash);
    },
    async baseline() {
      for (const path of readPaths) await readFile(path);
    },
  },
  // Against the libraries a user would pick instead (issue 17).
  ...(await listingCases(base)),
  ...putCases(base),
  ...cacacheCases(base),
]);

await rm(base, { recursive: true, force: true });
