// Garbage collection with a trash (`trashMs`): what a run takes waits in `<prefix>.gc-trash/`,
// out of every read and listing, with its owners' marks; it comes back by `restoreCollected` or
// by itself once a root references it again, and a later run purges it once its stay is over.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { createMemoryObjectStore, type ObjectStore } from "@stowage/core";
import { createS3Client, createS3ObjectStore } from "@stowage/storage-s3";
import { s3ClientOptions, s3TestEnv } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { createBlobStore } from "../../src/blob-store.js";
import { collectGarbage } from "../../src/gc/collect-garbage.js";
import { createOwnedBlobStore } from "../../src/owned-blob-store.js";
import { restampingStore } from "../restamping-store.js";

const bytes = (text: string) => new TextEncoder().encode(text);
const DAY_MS = 24 * 60 * 60 * 1000;
const now = { graceMs: 0, timestampSlackMs: 0 };
const s3 = s3TestEnv("blob-store garbage collection with a trash");
/** A prefix of its own per test on the real server (Ceph RGW): S3's move is a copy and a delete. */
const rgw = async (): Promise<ObjectStore> =>
  createS3ObjectStore({
    client: createS3Client(s3ClientOptions(s3)),
    bucket: s3.values.S3_BUCKET!,
    prefix: `test/gc-trash/${randomUUID()}/`,
  });

const backends: [string, () => Promise<ObjectStore>][] = [
  ["memory", async (): Promise<ObjectStore> => createMemoryObjectStore()],
  // A move that restamps and puts that leave touch records: S3's way.
  ["a store whose move restamps (S3)", async (): Promise<ObjectStore> => restampingStore().store],
  ...(s3.ready ? [["Ceph RGW", rgw] as [string, () => Promise<ObjectStore>]] : []),
];
describe.each(backends)("a collection with a trash, on %s", (_name, createObjects) => {
  async function setup() {
    const objects = await createObjects();
    const blobs = createBlobStore({ store: objects, layout: "sharded", prefix: "blobs/" });
    const alice = createOwnedBlobStore({ blobs, owner: "user:alice", marks: objects, prefix: "owners/" });
    const kept = await blobs.put(bytes("referenced"));
    const orphan = await alice.put(bytes("an image nothing names yet"));
    await sleep(5);
    const ownerMarks = [{ store: objects, prefix: "owners/" }];
    return { objects, blobs, alice, kept, orphan, ownerMarks };
  }

  it("takes the unreferenced blob into the trash: gone from reads and listings, its owner's mark kept, restored exactly", async () => {
    const { objects, blobs, alice, kept, orphan, ownerMarks } = await setup();
    const owners: string[] = [];
    const report = await collectGarbage({
      blobs,
      roots: [kept.ref],
      ownerMarks,
      trashMs: 7 * DAY_MS,
      onOwnerOfTrashed: ({ owner }) => owners.push(owner),
      ...now,
    });
    expect(report).toMatchObject({ deleted: 1, trashed: 1, purged: 0, staleOwnerMarks: 0 });
    expect(owners).toEqual(["user:alice"]);
    expect(await blobs.has(orphan.hash)).toBe(false);
    expect(await blobs.get(orphan.hash)).toBeNull();
    expect(await alice.has(orphan.hash)).toBe(false);
    expect((await blobs.list()).items.map((item) => item.hash)).toEqual([kept.hash]);
    expect((await objects.list({ prefix: "blobs/.gc-trash/" })).items.map((item) => item.key)).toEqual([
      `blobs/.gc-trash/${orphan.hash}`,
    ]);
    // A run within the stay leaves it there.
    expect(
      await collectGarbage({ blobs, roots: [kept.ref], ownerMarks, trashMs: 7 * DAY_MS, ...now }),
    ).toMatchObject({
      deleted: 0,
      purged: 0,
    });

    expect(await blobs.restoreCollected(orphan.ref)).toBe(true);
    expect(await alice.get(orphan.hash)).toEqual(bytes("an image nothing names yet"));
    // Stamped at the restore: a collection with a grace period leaves it while its refs are put right.
    expect(
      await collectGarbage({ blobs, roots: [kept.ref], graceMs: 60_000, trashMs: 7 * DAY_MS }),
    ).toMatchObject({
      deleted: 0,
    });
    expect(await blobs.restoreCollected(orphan.hash)).toBe(false);
  });

  it("comes back by itself once a root references it again", async () => {
    const { blobs, alice, kept, orphan, ownerMarks } = await setup();
    await collectGarbage({ blobs, roots: [kept.ref], ownerMarks, trashMs: 7 * DAY_MS, ...now });
    const dry = await collectGarbage({
      blobs,
      roots: [kept.ref, orphan.ref],
      ownerMarks,
      trashMs: 7 * DAY_MS,
      dryRun: true,
      ...now,
    });
    expect(dry).toMatchObject({ restoredFromTrash: 1, deleted: 0 });
    expect(await blobs.has(orphan.hash)).toBe(false);
    const report = await collectGarbage({
      blobs,
      roots: [kept.ref, orphan.ref],
      ownerMarks,
      trashMs: 7 * DAY_MS,
      ...now,
    });
    expect(report).toMatchObject({ restoredFromTrash: 1, deleted: 0, referenced: 2 });
    expect(await alice.get(orphan.hash)).toEqual(bytes("an image nothing names yet"));
  });

  it("is purged by a later run once its stay is over, its owner's mark with it; trashMs 0 empties the trash", async () => {
    const { objects, blobs, alice, kept, orphan, ownerMarks } = await setup();
    await collectGarbage({ blobs, roots: [kept.ref], ownerMarks, trashMs: 1, ...now });
    await sleep(5);
    const dry = await collectGarbage({
      blobs,
      roots: [kept.ref],
      ownerMarks,
      trashMs: 1,
      dryRun: true,
      ...now,
    });
    expect(dry).toMatchObject({ purged: 1, purgedBytes: 26 });
    const purged: string[] = [];
    const removed: string[] = [];
    const report = await collectGarbage({
      blobs,
      roots: [kept.ref],
      ownerMarks,
      trashMs: 1,
      onBlobPurged: ({ hash }) => purged.push(hash),
      onOwnerMarkRemoved: ({ owner }) => removed.push(owner),
      ...now,
    });
    expect(report).toMatchObject({ purged: 1, purgedBytes: 26, staleOwnerMarks: 1 });
    expect(purged).toEqual([orphan.hash]);
    expect(removed).toEqual(["user:alice"]);
    expect(await blobs.restoreCollected(orphan.hash)).toBe(false);
    expect(await alice.has(orphan.hash)).toBe(false);

    // Taken again with a long stay, then a run without a trash deletes it at once.
    const again = await alice.put(bytes("another one"));
    await sleep(5);
    await collectGarbage({ blobs, roots: [kept.ref], ownerMarks, trashMs: 7 * DAY_MS, ...now });
    expect(await collectGarbage({ blobs, roots: [kept.ref], ownerMarks, ...now })).toMatchObject({
      purged: 1,
    });
    expect((await objects.list({ prefix: "blobs/.gc-trash/" })).items).toEqual([]);
    expect(await blobs.restoreCollected(again.hash)).toBe(false);
  });

  it("a blob stored again while in the trash: the restore keeps the stored one and drops the copy", async () => {
    const { objects, blobs, kept, orphan } = await setup();
    await collectGarbage({ blobs, roots: [kept.ref], trashMs: 7 * DAY_MS, ...now });
    await blobs.put(bytes("an image nothing names yet"));
    expect(await blobs.restoreCollected(orphan.hash)).toBe(true);
    expect(await blobs.get(orphan.hash)).toEqual(bytes("an image nothing names yet"));
    expect((await objects.list({ prefix: "blobs/.gc-trash/" })).items).toEqual([]);
  });

  it("a crash as a blob moves into the trash loses nothing: it is put back, then taken with a fresh stay", async () => {
    const { objects, kept, orphan } = await setup();
    let crash = true;
    const crashing: ObjectStore = {
      ...objects,
      move: async (from, to, options) => {
        if (crash && to.includes("/.gc-trash/")) throw new Error("crash");
        return objects.move(from, to, options);
      },
    };
    const blobsOfCrashing = createBlobStore({ store: crashing, layout: "sharded", prefix: "blobs/" });
    await expect(
      collectGarbage({ blobs: blobsOfCrashing, roots: [kept.ref], trashMs: 7 * DAY_MS, ...now }),
    ).rejects.toThrow();
    crash = false;
    const blobs = createBlobStore({ store: objects, layout: "sharded", prefix: "blobs/" });
    // Put back by the failing run (or, had the process died, by the next one's recovery).
    expect(await blobs.get(orphan.hash)).toEqual(bytes("an image nothing names yet"));
    const next = await collectGarbage({ blobs, roots: [kept.ref], trashMs: 7 * DAY_MS, graceMs: 60_000 });
    expect(next).toMatchObject({ deleted: 0 });
    await sleep(5);
    expect(await collectGarbage({ blobs, roots: [kept.ref], trashMs: 7 * DAY_MS, ...now })).toMatchObject({
      trashed: 1,
    });
    const [copy] = (await objects.list({ prefix: "blobs/.gc-trash/" })).items;
    expect(Date.now() - copy!.lastModified.getTime()).toBeLessThan(60_000);
  });

  it("refuses a bad trashMs and a ref that is none, changing nothing", async () => {
    const { blobs, kept, orphan } = await setup();
    for (const trashMs of [-1, Number.NaN, "7" as never, Number.POSITIVE_INFINITY]) {
      await expect(collectGarbage({ blobs, roots: [kept.ref], trashMs, ...now })).rejects.toMatchObject({
        code: "INVALID_INPUT",
      });
    }
    for (const hostile of ["../x", "blob:sha256:../../etc", "", "g".repeat(64)]) {
      await expect(blobs.restoreCollected(hostile)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    }
    expect(await blobs.has(orphan.hash)).toBe(true);
  });
});
