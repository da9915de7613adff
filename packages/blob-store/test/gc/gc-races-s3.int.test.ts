import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { ObjectStore } from "@stowage/core";
import { seededRandom } from "@stowage/core/testing";
import { createS3Client, createS3ObjectStore } from "@stowage/storage-s3";
import { s3TestEnv } from "@stowage/test-support";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type BlobStore, createBlobStore } from "../../src/blob-store.js";
import { collectGarbage } from "../../src/gc/collect-garbage.js";
import type { Hook } from "../hooked-store.js";
import { describeOwnerMarkCases } from "../owner-mark-cases.js";
import { describeRestampingRaces } from "../restamping-race-cases.js";

// The S3 store's move is CopyObject (a new Last-Modified) then DeleteObject, so the protocol's
// timestamp check cannot work there: the races run against the real server (Ceph RGW) and its
// real move, with code injected before store operations and inside the move, between its copy
// and its delete (an SDK middleware on the DeleteObject request).
const env = s3TestEnv("blob-store garbage collection races");
const bytes = (text: string) => new TextEncoder().encode(text);

const client = createS3Client({
  endpoint: env.values.S3_ENDPOINT ?? "http://127.0.0.1:1",
  region: process.env.S3_REGION || "us-east-1",
  accessKeyId: env.values.S3_ACCESS_KEY_ID ?? "unset",
  secretAccessKey: env.values.S3_SECRET_ACCESS_KEY ?? "unset",
});
/** Runs inside the store's move, before its DeleteObject of a key (relative to `storePrefix`). */
let beforeDelete: Hook | undefined;
let storePrefix = "";
client.middlewareStack.add(
  (next, context) => async (args) => {
    const key = (args.input as { Key?: string }).Key;
    if (context.commandName === "DeleteObjectCommand" && key?.startsWith(storePrefix)) {
      await beforeDelete?.(key.slice(storePrefix.length));
    }
    return next(args);
  },
  { step: "initialize", name: "stowageTestBeforeDelete" },
);

function rgwStore(): ObjectStore {
  storePrefix = `test/blob-store-gc/${randomUUID()}/`;
  return createS3ObjectStore({ client, bucket: env.values.S3_BUCKET ?? "unset", prefix: storePrefix });
}

async function emptyStore(store: ObjectStore): Promise<void> {
  for await (const item of store.iterate({ prefix: "" })) await store.delete(item.key);
}

describeRestampingRaces("garbage collection racing writers on S3 (Ceph RGW)", {
  ...(env.ready ? {} : { skip: env.reason }),
  async create() {
    const store = rgwStore();
    return {
      store,
      setBetweenCopyAndDelete: (hook) => {
        beforeDelete = hook;
      },
      destroy: () => emptyStore(store),
    };
  },
  // RGW's HEAD reports whole seconds: the default slack covers it, and a candidate must be older.
  settleMs: 2100,
  gc: { graceMs: 0 },
});

describeOwnerMarkCases("owner marks of collected blobs on S3 (Ceph RGW)", {
  ...(env.ready ? {} : { skip: env.reason }),
  async create() {
    const store = rgwStore();
    return { store, destroy: () => emptyStore(store) };
  },
  settleMs: 2100,
  gc: { graceMs: 0 },
});

describe.skipIf(!env.ready)("garbage collection against concurrent writers on S3 (Ceph RGW)", () => {
  let store: ObjectStore;
  let blobs: BlobStore;

  beforeEach(() => {
    store = rgwStore();
    blobs = createBlobStore({ store, layout: "sharded" });
  });

  afterEach(() => emptyStore(store));

  it("writers re-storing old images while collections run back to back lose none they referenced", async () => {
    // Each writer cycles through more images than it stores within the grace period, so
    // collections keep deleting images a writer is about to store again. A writer's ref (its
    // session line) comes a while after its put, within the grace period: until then only the
    // put's own protocol protects the blob. Once written, the ref's blob must be readable.
    const random = seededRandom(15);
    const graceMs = 1000;
    await blobs.put(bytes(`an orphan ${randomUUID()}`)); // old by the time the writers start
    await sleep(2 * graceMs + 100);
    const current = new Map<number, string>();
    let writes = 0;
    let missing = 0;
    let writing = 0;
    const writer = async (id: number) => {
      writing++;
      const images = Array.from({ length: 4 }, (_, i) => bytes(`writer ${id} image ${i} ${randomUUID()}`));
      const until = Date.now() + 15_000;
      for (let n = 0; Date.now() < until; n++) {
        const { hash } = await blobs.put(images[n % images.length]!);
        await sleep(random() * graceMs * 0.8);
        current.set(id, hash);
        if (!(await blobs.get(hash))) missing++;
        writes++;
      }
      writing--;
    };
    const writers = Promise.all(Array.from({ length: 6 }, (_, id) => writer(id)));
    let runs = 0;
    let deleted = 0;
    let restored = 0;
    do {
      const report = await collectGarbage({ blobs, roots: () => [...current.values()], graceMs });
      runs++;
      deleted += report.deleted;
      restored += report.restored;
    } while (writing > 0);
    await writers;
    console.log(
      `${writes} writes against ${runs} collections on RGW (${deleted} deleted, ${restored} put back)`,
    );
    // Both outcomes happened: collections deleted blobs, and put back blobs writers had just stored.
    expect(deleted).toBeGreaterThan(0);
    expect(restored).toBeGreaterThan(0);
    expect(missing).toBe(0);
    for (const hash of current.values()) expect(await blobs.get(hash)).not.toBeNull();
  });
});
