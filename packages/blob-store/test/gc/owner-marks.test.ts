import { setTimeout as sleep } from "node:timers/promises";
import { createMemoryObjectStore } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { createBlobStore } from "../../src/blob-store.js";
import { collectGarbage } from "../../src/gc/collect-garbage.js";
import { createOwnedBlobStore } from "../../src/owned-blob-store.js";
import { describeOwnerMarkCases } from "../owner-mark-cases.js";
import { restampingStore } from "../restamping-store.js";

const bytes = (text: string) => new TextEncoder().encode(text);
const now = { graceMs: 0, timestampSlackMs: 0 };

describeOwnerMarkCases("owner marks of collected blobs (memory store)", {
  create: async () => ({ store: createMemoryObjectStore(), destroy: async () => {} }),
  settleMs: 5,
  gc: now,
});

describeOwnerMarkCases("owner marks of collected blobs (a memory store whose move restamps, as S3's)", {
  create: async () => ({ store: restampingStore().store, destroy: async () => {} }),
  settleMs: 5,
  gc: now,
});

describe("collectGarbage's ownerMarks", () => {
  it("removes marks whose blob went some other way, in every location given, and nothing else there", async () => {
    const shared = createMemoryObjectStore();
    const elsewhere = createMemoryObjectStore();
    const blobs = createBlobStore({ store: shared, prefix: "blobs/" });
    const alice = createOwnedBlobStore({ blobs, owner: "user:alice", marks: shared, prefix: "owners/" });
    const carol = createOwnedBlobStore({ blobs, owner: "org:acme", marks: elsewhere, prefix: "" });
    const gone = (await alice.put(bytes("deleted by hand"))).hash;
    await carol.put(bytes("deleted by hand"));
    await blobs.delete(gone);
    // Not marks: another record under the prefix, and a key of the wrong shape.
    await elsewhere.put("notes/readme", bytes("x"));
    await elsewhere.put(`user:dave/${gone}/extra`, bytes(""));
    await sleep(5);
    const report = await collectGarbage({
      blobs,
      roots: [],
      ownerMarks: [
        { store: shared, prefix: "owners/" },
        { store: elsewhere, prefix: "" },
      ],
      ...now,
    });
    expect(report).toMatchObject({ deleted: 0, staleOwnerMarks: 2 });
    expect((await shared.list({ prefix: "owners/" })).items).toEqual([]);
    expect((await elsewhere.list()).items.map((item) => item.key).sort()).toEqual([
      "notes/readme",
      `user:dave/${gone}/extra`,
    ]);
  });

  it("tells onBlobDeleted each blob it deleted and onOwnerMarkRemoved whose marks went; a dry run tells nothing", async () => {
    const shared = createMemoryObjectStore();
    const blobs = createBlobStore({ store: shared, prefix: "blobs/" });
    const alice = createOwnedBlobStore({ blobs, owner: "user:alice", marks: shared, prefix: "owners/" });
    const acme = createOwnedBlobStore({ blobs, owner: "org:acme", marks: shared, prefix: "owners/" });
    const shared2 = await alice.put(bytes("both stored it"));
    await acme.put(bytes("both stored it"));
    const kept = await alice.put(bytes("still referenced"));
    await sleep(5);
    const told = { blobs: [] as unknown[], marks: [] as unknown[] };
    const options = {
      blobs,
      roots: [kept.ref],
      ownerMarks: [{ store: shared, prefix: "owners/" }],
      onBlobDeleted: (blob: unknown) => void told.blobs.push(blob),
      onOwnerMarkRemoved: (mark: unknown) => void told.marks.push(mark),
      ...now,
    };
    await collectGarbage({ ...options, dryRun: true });
    expect(told).toEqual({ blobs: [], marks: [] });
    await collectGarbage(options);
    expect(told.blobs).toEqual([{ hash: shared2.hash, size: "both stored it".length }]);
    expect(told.marks).toEqual(
      expect.arrayContaining([
        { owner: "user:alice", hash: shared2.hash },
        { owner: "org:acme", hash: shared2.hash },
      ]),
    );
    expect(told.marks).toHaveLength(2);
    await expectStowageError(
      collectGarbage({ blobs, roots: [], onBlobDeleted: 1 as never }),
      "INVALID_INPUT",
    );
  });

  it("without ownerMarks, no mark is looked at", async () => {
    const shared = createMemoryObjectStore();
    const blobs = createBlobStore({ store: shared, prefix: "blobs/" });
    const alice = createOwnedBlobStore({ blobs, owner: "user:alice", marks: shared, prefix: "owners/" });
    await alice.put(bytes("screenshot"));
    await sleep(5);
    expect(await collectGarbage({ blobs, roots: [], ...now })).toMatchObject({
      deleted: 1,
      staleOwnerMarks: 0,
    });
    expect((await shared.list({ prefix: "owners/" })).items).toHaveLength(1);
  });

  it("refuses mark locations that could hold the blobs themselves, before anything is deleted", async () => {
    const shared = createMemoryObjectStore();
    const blobs = createBlobStore({ store: shared, layout: "sharded", prefix: "blobs/" });
    const hash = (await blobs.put(bytes("kept"))).hash;
    await sleep(5);
    for (const ownerMarks of [
      [{ store: shared, prefix: "" }],
      [{ store: shared, prefix: "blobs/" }],
      [{ store: shared, prefix: "blobs/owners/" }],
      [{ store: shared, prefix: "no-slash" }],
      [{ store: {}, prefix: "owners/" }],
      [null],
      { store: shared, prefix: "owners/" },
    ]) {
      await expectStowageError(
        collectGarbage({ blobs, roots: [], ownerMarks: ownerMarks as never, ...now }),
        "INVALID_INPUT",
      );
    }
    const unprefixed = createBlobStore({ store: shared, layout: "sharded" });
    await expectStowageError(
      collectGarbage({
        blobs: unprefixed,
        roots: [],
        ownerMarks: [{ store: shared, prefix: "owners/" }],
        ...now,
      }),
      "INVALID_INPUT",
    );
    expect(await blobs.has(hash)).toBe(true);
  });
});
