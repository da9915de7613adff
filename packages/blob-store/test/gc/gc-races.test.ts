import { setTimeout as sleep } from "node:timers/promises";
import { type ContentStore, createMemoryObjectStore, type ObjectStore } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { beforeEach, describe, expect, it } from "vitest";
import { type BlobStore, createBlobStore } from "../../src/blob-store.js";
import { collectGarbage } from "../../src/gc/collect-garbage.js";
import { createOwnedBlobStore } from "../../src/owned-blob-store.js";
import { hookedStore, once } from "../hooked-store.js";
import { describeRestampingRaces } from "../restamping-race-cases.js";
import { restampingStore } from "../restamping-store.js";

const bytes = (text: string) => new TextEncoder().encode(text);
const now = { graceMs: 0, timestampSlackMs: 0 };

describe("garbage collection racing writers (injected timing)", () => {
  let objects: ObjectStore;
  let hooks: ReturnType<typeof hookedStore>["hooks"];
  let blobs: BlobStore;
  let old: string;
  /** The refs "session lines" hold; the collection's root source reads them. */
  let lines: Set<string>;
  const roots = () => [...lines];

  beforeEach(async () => {
    const hooked = hookedStore(createMemoryObjectStore());
    objects = hooked.store;
    hooks = hooked.hooks;
    blobs = createBlobStore({ store: objects, layout: "sharded" });
    old = (await blobs.put(bytes("an old screenshot"))).hash;
    lines = new Set();
    await sleep(5);
  });

  // The collection's step that removes a candidate: a delete before the fix, a move aside after it.
  const whenRemoving = (step: () => Promise<void>) => {
    const hook = once(() => blobs.keyFor(old), step);
    hooks.move = hook;
    hooks.delete = hook;
  };

  it("a writer that re-puts a candidate and writes its ref while the collection decides keeps it", async () => {
    whenRemoving(async () => {
      expect((await blobs.put(bytes("an old screenshot"))).created).toBe(false);
      lines.add(old);
    });
    const report = await collectGarbage({ blobs, roots, ...now });
    expect(await blobs.get(old)).toEqual(bytes("an old screenshot"));
    expect(report).toMatchObject({ deleted: 0, restored: 1 });
  });

  it("a writer's touch just before the move keeps the blob even before its ref is written", async () => {
    whenRemoving(async () => {
      expect((await blobs.put(bytes("an old screenshot"))).created).toBe(false);
      // The session line is written only after the collection is done.
    });
    const report = await collectGarbage({ blobs, roots, ...now });
    lines.add(old);
    expect(await blobs.has(old)).toBe(true);
    expect(report.restored).toBe(1);
  });

  it("a ref written between the two readings of the roots keeps the candidate", async () => {
    // A session rewrite copies an old ref into a new file without putting the blob again.
    whenRemoving(async () => {
      lines.add(old);
    });
    const report = await collectGarbage({ blobs, roots, ...now });
    expect(await blobs.has(old)).toBe(true);
    expect(report).toMatchObject({ deleted: 0, restored: 1 });
  });

  it("a put whose touch finds the blob gone writes it again instead of reporting it stored", async () => {
    // The collection runs entirely between the writer's look (head) and its touch.
    hooks.touch = once(
      () => blobs.keyFor(old),
      async () => {
        const report = await collectGarbage({ blobs, roots, ...now });
        expect(report.deleted).toBe(1);
      },
    );
    const put = await blobs.put(bytes("an old screenshot"));
    lines.add(put.hash);
    expect(put.created).toBe(true);
    expect(await blobs.get(old)).toEqual(bytes("an old screenshot"));
  });

  // A streamed put stages its bytes, then moves them under their hash: a collection in between.
  const streamOf = (text: string) => new Blob([bytes(text)]).stream();
  const whenStaged = (step: () => Promise<void>) => {
    let done = false;
    hooks.move = async (key) => {
      if (done || !key.startsWith(".staging/")) return;
      done = true;
      await step();
    };
  };

  it("a collection with graceMs 0 leaves the staged bytes of a streamed put still running", async () => {
    let report: Awaited<ReturnType<typeof collectGarbage>> | undefined;
    whenStaged(async () => {
      await sleep(5);
      report = await collectGarbage({ blobs, roots, ...now });
    });
    const put = await blobs.put(streamOf("a screenshot still arriving"));
    expect(report?.staleStaging).toBe(0);
    expect(new TextDecoder().decode((await blobs.get(put.hash))!)).toBe("a screenshot still arriving");
  });

  it("staged bytes taken by a collection fail the put with COLLECTED_DURING_PUT, never a bare NOT_FOUND", async () => {
    whenStaged(async () => {
      await sleep(5); // stamped before the run started
      await collectGarbage({ blobs, roots, ...now, stagingGraceMs: 0 });
    });
    const err = await expectStowageError(blobs.put(streamOf("a screenshot paused too long")), "CONFLICT");
    expect(err.reason).toBe("COLLECTED_DURING_PUT");
    expect(err.message).toMatch(/staged bytes were removed by a garbage collection.*put it again/);
    expect((await objects.list({ prefix: ".staging/" })).items).toEqual([]);
  });

  it("a writer that stores the blob after it was moved aside keeps its copy; the aside copy goes", async () => {
    hooks.head = once(
      () => `.gc/${old}`,
      async () => {
        const put = await blobs.put(bytes("an old screenshot"));
        expect(put.created).toBe(true);
      },
    );
    const report = await collectGarbage({ blobs, roots, ...now });
    expect(await blobs.get(old)).toEqual(bytes("an old screenshot"));
    expect(await objects.head(`.gc/${old}`)).toBeNull();
    expect(report.deleted).toBe(1); // the aside copy; the blob itself is the writer's new one
  });

  it("reads find a blob while it is set aside", async () => {
    hooks.head = once(
      () => `.gc/${old}`,
      async () => {
        expect(await objects.head(blobs.keyFor(old))).toBeNull();
        expect(await blobs.get(old)).toEqual(bytes("an old screenshot"));
        const stream = await blobs.streamVerified(old);
        expect(await new Response(stream).text()).toBe("an old screenshot");
        await blobs.verify(old);
      },
    );
    await collectGarbage({ blobs, roots, ...now });
    expect(await blobs.has(old)).toBe(false);
  });

  it("stat and has see a blob set aside (a running or crashed collection), and so do views over the store", async () => {
    const marks = createMemoryObjectStore();
    const owned = createOwnedBlobStore({ blobs, owner: "user:alice", marks, prefix: "blob-owners/" });
    await owned.put(bytes("an old screenshot"));
    await objects.move(blobs.keyFor(old), `.gc/${old}`);
    expect(await blobs.has(old)).toBe(true);
    expect(await blobs.stat(old)).toMatchObject({ hash: old, size: 17 });
    expect(await owned.has(old)).toBe(true);
    expect(await owned.stat(old)).toMatchObject({ hash: old, size: 17 });
    // A ContentStore user (hot-state's content registry) asks `stat`.
    const content: ContentStore = blobs;
    expect(await content.stat(old)).toMatchObject({ hash: old, size: 17 });
  });

  it("delete also removes the copy a collection holds aside, which would otherwise come back", async () => {
    await objects.move(blobs.keyFor(old), `.gc/${old}`);
    await blobs.delete(old);
    expect(await objects.head(`.gc/${old}`)).toBeNull();
    lines.add(old);
    expect(await collectGarbage({ blobs, roots, ...now })).toMatchObject({ recovered: 0 });
    expect(await blobs.has(old)).toBe(false);
  });

  it("when the second reading of the roots fails, every candidate goes back and nothing is deleted", async () => {
    let readings = 0;
    const failingSecond = {
      name: "sessions",
      refs: async function* () {
        if (++readings === 2) throw new Error("sessions directory went away");
        yield* lines;
      },
    };
    const error = await expectStowageError(
      collectGarbage({ blobs, roots: [failingSecond], ...now }),
      "UNAVAILABLE",
    );
    expect(error.reason).toBe("ROOTS_UNREADABLE");
    expect(error.details).toEqual({ source: "sessions" });
    expect(await blobs.get(old)).toEqual(bytes("an old screenshot"));
    expect((await objects.list({ prefix: ".gc/" })).items).toEqual([]);
  });

  it("blobs a stopped run left aside are put back by the next run", async () => {
    await objects.move(blobs.keyFor(old), `.gc/${old}`);
    expect(await blobs.get(old)).toEqual(bytes("an old screenshot")); // still readable meanwhile
    lines.add(old);
    const report = await collectGarbage({ blobs, roots, ...now });
    expect(report).toMatchObject({ recovered: 1, referenced: 1, deleted: 0 });
    expect(await objects.head(blobs.keyFor(old))).not.toBeNull();
  });
});

describeRestampingRaces("garbage collection over a memory store whose move gives a new timestamp (as S3's)", {
  async create() {
    const { store, hooks } = restampingStore();
    return {
      store,
      setBetweenCopyAndDelete: (hook) => {
        hooks.betweenCopyAndDelete = hook;
      },
      destroy: async () => {},
    };
  },
  settleMs: 200,
  gc: now,
});

describe("the timestamp check comes from the store's declared capability", () => {
  it("no probe object is written: the only puts are the caller's", async () => {
    const hooked = hookedStore(createMemoryObjectStore());
    const puts: string[] = [];
    hooked.hooks.put = (key) => {
      puts.push(key);
    };
    const blobs = createBlobStore({ store: hooked.store });
    await blobs.put(bytes("orphan"));
    await sleep(5);
    const before = puts.length;
    const report = await collectGarbage({ blobs, roots: [], ...now });
    expect(report.deleted).toBe(1);
    expect(puts.slice(before)).toEqual([]);
  });
});
