import { randomUUID } from "node:crypto";
import { appendFile, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { S3Client } from "@aws-sdk/client-s3";
import { type BenchCase, referenceSource, runBenchmarks } from "@stowage/bench-kit";
import { mapConcurrent } from "@stowage/core";
import { createFsObjectStore } from "@stowage/storage-fs";
import { createS3Client, createS3ObjectStore } from "@stowage/storage-s3";
import { s3OptionsFromEnv } from "@stowage/storage-s3/env";
import { createObjectSessionStore, type SessionStoreEntry } from "../src/index.js";
import { realisticTranscriptEntries } from "../src/testing/index.js";

// 50,000 transcript lines shaped like the SDK mirrors them (from a realistic session, fresh uuids).
const ENTRIES = 50_000;
const sessionId = randomUUID();
// Lines up to 4 KiB (600 of the session's 848; 2 KiB on average): the larger tool outputs are
// artifacts in Stowage, and a shared RGW keeps every byte in memory.
const lines = realisticTranscriptEntries(sessionId).filter((entry) => JSON.stringify(entry).length <= 4096);
const entries = Array.from({ length: ENTRIES }, (_, i) => ({
  ...lines[i % lines.length]!,
  uuid: randomUUID(),
}));
const inBatches = (size: number) =>
  Array.from({ length: Math.ceil(ENTRIES / size) }, (_, i) => entries.slice(i * size, (i + 1) * size));
const mib = entries.reduce((sum, entry) => sum + JSON.stringify(entry).length, 0) / 1024 / 1024;
console.log(`SessionStore cases: ${ENTRIES.toLocaleString("en-US")} entries, ${mib.toFixed(1)} MiB of JSON`);

interface AnyStore {
  append(key: { projectKey: string; sessionId: string }, entries: SessionStoreEntry[]): Promise<void>;
  load(key: { projectKey: string; sessionId: string }): Promise<SessionStoreEntry[] | null>;
}
const appendAll = async (store: AnyStore, batched: SessionStoreEntry[][], key = newKey()) => {
  for (const batch of batched) await store.append(key, batch);
  return key;
};
function newKey() {
  return { projectKey: "-workspace-app", sessionId: randomUUID() };
}
const expectAll = (loaded: SessionStoreEntry[] | null) => {
  if (loaded?.length !== ENTRIES) throw new Error(`loaded ${loaded?.length} entries, expected ${ENTRIES}`);
};

const cases: BenchCase[] = [];
const cleanups: (() => Promise<void>)[] = [];

// The file system: against appending the same lines to one JSONL file (and reading it back).
const root = await mkdtemp(join(tmpdir(), "stowage-session-store-bench-"));
cleanups.push(() => rm(root, { recursive: true, force: true }));
const fsStore = createObjectSessionStore({ store: createFsObjectStore({ root: join(root, "store") }) });
// The load case reads what is set up once, apart from what the append cases empty before each run.
const fsLoadStore = createObjectSessionStore({ store: createFsObjectStore({ root: join(root, "load") }) });
// appendFile does not fsync: the same store without fsync is the like-for-like comparison.
const fsStoreNoFsync = createObjectSessionStore({
  store: createFsObjectStore({ root: join(root, "store"), fsync: false }),
});
const jsonlAppend = async (batched: SessionStoreEntry[][], directory = root) => {
  const file = join(directory, `${randomUUID()}.jsonl`);
  for (const batch of batched)
    await appendFile(file, `${batch.map((entry) => JSON.stringify(entry)).join("\n")}\n`);
  return file;
};
// Each run starts from an empty directory: the bytes of earlier runs are not left to pile up.
const emptyRoot = async () => {
  await rm(join(root, "store"), { recursive: true, force: true });
  for (const name of await readdir(root)) if (name.endsWith(".jsonl")) await rm(join(root, name));
};
for (const size of [100, 500]) {
  const batched = inBatches(size);
  cases.push({
    prepare: emptyRoot,
    warmup: false,
    name: `object SessionStore on fs: append of ${ENTRIES.toLocaleString("en-US")} entries in batches of ${size} vs appendFile of the same lines to a JSONL file`,
    target: { kind: "speed", min: 0 },
    units: { count: ENTRIES, label: "ops" },
    rounds: 3,
    ours: () => appendAll(fsStore, batched),
    baseline: () => jsonlAppend(batched),
  });
  cases.push({
    prepare: emptyRoot,
    warmup: false,
    name: `object SessionStore on fs with fsync: false: append of ${ENTRIES.toLocaleString("en-US")} entries in batches of ${size} vs appendFile of the same lines to a JSONL file`,
    target: { kind: "speed", min: 0 },
    units: { count: ENTRIES, label: "ops" },
    rounds: 3,
    ours: () => appendAll(fsStoreNoFsync, batched),
    baseline: () => jsonlAppend(batched),
  });
}
{
  const stored = await appendAll(fsLoadStore, inBatches(100));
  const file = await jsonlAppend(inBatches(100), join(root, "load"));
  cases.push({
    name: `object SessionStore on fs: load of ${ENTRIES.toLocaleString("en-US")} entries (appended in batches of 100) vs reading and parsing the JSONL file`,
    target: { kind: "speed", min: 0 },
    units: { count: ENTRIES, label: "ops" },
    rounds: 7,
    ours: async () => expectAll(await fsLoadStore.load(stored)),
    baseline: async () =>
      expectAll(
        (await readFile(file, "utf8"))
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line) as SessionStoreEntry),
      ),
  });
}

// S3 (Ceph RGW): against Anthropic's reference S3SessionStore from the SDK repository's
// session-store examples (not on npm), brought next to this bench at run time, never committed.
const s3 = s3OptionsFromEnv(process.env);
if (!s3) {
  console.warn(
    'S3 cases skipped: S3_ENDPOINT and S3_BUCKET are not set (eval "$(tooling/rgw/start.sh)" to run them)',
  );
} else {
  const client: S3Client = createS3Client(s3.client);
  const prefix = `bench/session-store/${randomUUID()}`;
  // Between rounds the bench deletes what it wrote: for good, not into the trash.
  const s3Store = createObjectSessionStore({
    store: createS3ObjectStore({ client, bucket: s3.bucket, prefix: `${prefix}/ours/` }),
    trashDays: 0,
  });
  const reference = await referenceSource({
    repo: "anthropics/claude-agent-sdk-typescript",
    path: "examples/session-stores/s3/src/S3SessionStore.ts",
    directory: new URL(`./.reference-${process.pid}/`, import.meta.url).pathname,
  });
  console.log(`peer: ${reference.origin}`);
  const { S3SessionStore } = (await import(reference.file)) as {
    S3SessionStore: new (options: {
      bucket: string;
      prefix: string;
      client: S3Client;
    }) => AnyStore & {
      delete(key: ReturnType<typeof newKey>): Promise<void>;
    };
  };
  await reference.dispose();
  const peer = new S3SessionStore({ bucket: s3.bucket, prefix: `${prefix}/peer`, client });
  // The peer's delete sends DeleteObjects, which RGW 16 refuses without Content-MD5: its objects
  // are deleted one by one through an ObjectStore on its prefix instead.
  const peerObjects = createS3ObjectStore({ client, bucket: s3.bucket, prefix: `${prefix}/peer/` });
  peer.delete = async (key) => {
    const keys: string[] = [];
    for await (const item of peerObjects.iterate({ prefix: `${key.projectKey}/${key.sessionId}/` }))
      keys.push(item.key);
    await mapConcurrent(keys, 16, (objectKey) => peerObjects.delete(objectKey));
  };
  // RGW keeps objects in memory (memstore): each run deletes what the previous ones wrote.
  const written: {
    store: AnyStore & { delete(key: ReturnType<typeof newKey>): Promise<void> };
    key: ReturnType<typeof newKey>;
  }[] = [];
  const appendRemembered = async (
    store: (typeof written)[number]["store"],
    batched: SessionStoreEntry[][],
  ) => {
    const key = newKey();
    written.push({ store, key });
    await appendAll(store, batched, key);
  };
  const deleteWritten = async () => {
    for (const { store, key } of written.splice(0)) await store.delete(key);
  };
  for (const size of [100, 500]) {
    const batched = inBatches(size);
    cases.push({
      prepare: deleteWritten,
      name: `object SessionStore on RGW: append of ${ENTRIES.toLocaleString("en-US")} entries in batches of ${size} vs Anthropic's reference S3SessionStore`,
      target: { kind: "speed", min: 1.0 },
      units: { count: ENTRIES, label: "ops" },
      rounds: 3,
      warmup: false,
      ours: () => appendRemembered(s3Store, batched),
      baseline: () => appendRemembered(peer, batched),
    });
    const ours = await appendAll(s3Store, batched);
    const theirs = await appendAll(peer, batched);
    cases.push({
      cleanup: async () => {
        await s3Store.delete(ours);
        await peer.delete(theirs);
      },
      name: `object SessionStore on RGW: load of ${ENTRIES.toLocaleString("en-US")} entries appended in batches of ${size} vs Anthropic's reference S3SessionStore`,
      target: { kind: "speed", min: 1.0 },
      units: { count: ENTRIES, label: "ops" },
      rounds: 3,
      ours: async () => expectAll(await s3Store.load(ours)),
      baseline: async () => expectAll(await peer.load(theirs)),
    });
  }
}

/**
 * What the trash costs a delete: a transcript of 500 parts (5,000 entries in batches of 10) written
 * before each run, then deleted into the trash (a manifest, then a move of each part) against
 * deleted at once (a delete of each part), on the same store. Both delete from the same layout, so
 * the ratio is the move's price over a delete's.
 */
function deleteCases(name: string, objects: () => Parameters<typeof createObjectSessionStore>[0]["store"]) {
  const store = createObjectSessionStore({ store: objects() });
  const batched = Array.from({ length: 500 }, (_, i) => entries.slice(i * 10, (i + 1) * 10));
  let key = newKey();
  cases.push({
    prepare: async () => {
      key = await appendAll(store, batched);
    },
    warmup: false,
    name: `object SessionStore on ${name}: delete of a transcript of 500 parts into the trash vs deleted at once`,
    target: { kind: "speed", min: 0 },
    units: { count: 500, label: "ops" },
    rounds: 3,
    ours: () => store.delete(key),
    baseline: () => store.delete(key, { trashDays: 0 }),
  });
}
deleteCases("fs", () => createFsObjectStore({ root: join(root, "delete") }));
if (s3) {
  const client = createS3Client(s3.client);
  const prefix = `bench/session-store-delete/${randomUUID()}/`;
  deleteCases("RGW", () => createS3ObjectStore({ client, bucket: s3.bucket, prefix }));
  cleanups.push(async () => {
    const objects = createS3ObjectStore({ client, bucket: s3.bucket, prefix });
    const keys: string[] = [];
    for await (const item of objects.iterate()) keys.push(item.key);
    await mapConcurrent(keys, 16, (objectKey) => objects.delete(objectKey));
  });
}

try {
  await runBenchmarks("@stowage/sessions SessionStore", cases);
} finally {
  for (const cleanup of cleanups) await cleanup();
}
