import { setTimeout as sleep } from "node:timers/promises";
import { createMemoryObjectStore } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { beforeEach, describe, expect, it } from "vitest";
import { type BlobStore, createBlobStore } from "../../src/blob-store.js";
import { collectGarbage } from "../../src/gc/collect-garbage.js";
import { createOwnedBlobStore } from "../../src/owned-blob-store.js";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("collectGarbage", () => {
  let blobs: BlobStore;
  let kept: string;
  let unreferenced: string;

  beforeEach(async () => {
    blobs = createBlobStore({ store: createMemoryObjectStore(), layout: "sharded" });
    kept = (await blobs.put(bytes("referenced"))).ref;
    unreferenced = (await blobs.put(bytes("orphan!"))).hash;
    await sleep(5);
  });

  it("deletes unreferenced blobs older than the grace period and reports counts and bytes", async () => {
    const report = await collectGarbage({ blobs, roots: [kept], graceMs: 0, timestampSlackMs: 0 });
    expect(report).toMatchObject({
      dryRun: false,
      scanned: 2,
      referenced: 1,
      young: 0,
      deleted: 1,
      deletedBytes: 7,
      rootRefs: 1,
    });
    expect(await blobs.has(kept)).toBe(true);
    expect(await blobs.has(unreferenced)).toBe(false);
  });

  it("keeps unreferenced blobs younger than the grace period", async () => {
    const report = await collectGarbage({ blobs, roots: [kept], graceMs: 60_000 });
    expect(report).toMatchObject({ scanned: 2, referenced: 1, young: 1, deleted: 0 });
    expect(await blobs.has(unreferenced)).toBe(true);
  });

  it("a dry run reports without deleting", async () => {
    const report = await collectGarbage({
      blobs,
      roots: [kept],
      graceMs: 0,
      timestampSlackMs: 0,
      dryRun: true,
    });
    expect(report).toMatchObject({ dryRun: true, deleted: 1, deletedBytes: 7 });
    expect(await blobs.has(unreferenced)).toBe(true);
  });

  it("keeps a blob written while the roots are being read", async () => {
    let written = "";
    async function* roots() {
      yield kept;
      written = (await blobs.put(bytes("written during the run"))).hash;
    }
    const report = await collectGarbage({ blobs, roots, graceMs: 0, timestampSlackMs: 0 });
    expect(await blobs.has(written)).toBe(true);
    expect(report.deleted).toBe(1);
    expect(report.young).toBe(1);
  });

  it("keeps an old blob that a writer re-references during the run", async () => {
    async function* roots() {
      yield kept;
      // A session writer stores the same image again: no rewrite, but its timestamp is refreshed.
      expect((await blobs.put(bytes("orphan!"))).created).toBe(false);
    }
    await collectGarbage({ blobs, roots, graceMs: 0, timestampSlackMs: 0 });
    expect(await blobs.has(unreferenced)).toBe(true);
  });

  it("deletes nothing when reading the roots fails", async () => {
    async function* roots(): AsyncGenerator<string> {
      yield kept;
      throw new Error("cannot read sessions directory");
    }
    const error = await expectStowageError(
      collectGarbage({ blobs, roots, graceMs: 0, timestampSlackMs: 0 }),
      "UNAVAILABLE",
    );
    expect(error.reason).toBe("ROOTS_UNREADABLE");
    expect(await blobs.has(unreferenced)).toBe(true);
  });

  it("names the root source that failed, and reads every source completely otherwise", async () => {
    const sources = [
      { name: "sessions", refs: () => [kept] },
      {
        name: "stored session blobs",
        refs: async function* () {
          yield kept;
          throw new Error("repository unreachable");
        },
      },
    ];
    const error = await expectStowageError(
      collectGarbage({ blobs, roots: sources, graceMs: 0, timestampSlackMs: 0 }),
      "UNAVAILABLE",
    );
    expect(error.details).toEqual({ source: "stored session blobs" });
    expect(await blobs.has(unreferenced)).toBe(true);
  });

  it("reports the distinct refs of each named root source", async () => {
    const report = await collectGarbage({
      blobs,
      roots: [
        { name: "sessions", refs: () => [kept, kept] },
        { name: "content refs", refs: () => [] },
      ],
      graceMs: 0,
      timestampSlackMs: 0,
    });
    expect(report.rootRefsBySource).toEqual({ sessions: 1, "content refs": 0 });
    expect(report).toMatchObject({ rootRefs: 1, deleted: 1 });
  });

  it("refuses roots it cannot read twice, and bad root sources, before reading anything", async () => {
    async function* scan() {
      yield kept;
    }
    const oneShot = await expectStowageError(
      collectGarbage({ blobs, roots: scan(), graceMs: 0, timestampSlackMs: 0 }),
      "INVALID_INPUT",
    );
    expect(oneShot.reason).toBe("ROOTS_NOT_REPEATABLE");
    for (const roots of [
      [{ name: "", refs: () => [] }],
      [{ name: "a", refs: "not a function" }],
      [
        { name: "a", refs: () => [] },
        { name: "a", refs: () => [] },
      ],
      42,
      null,
    ]) {
      await expectStowageError(
        collectGarbage({ blobs, roots: roots as never, graceMs: 0, timestampSlackMs: 0 }),
        "INVALID_INPUT",
      );
    }
    expect(await blobs.has(unreferenced)).toBe(true);
  });

  it("refuses an owner's view: it would delete bytes other owners stored", async () => {
    const shared = createMemoryObjectStore();
    const store = createBlobStore({ store: shared, layout: "sharded", prefix: "blobs/" });
    const view = (owner: string) =>
      createOwnedBlobStore({ blobs: store, owner, marks: shared, prefix: "blob-owners/" });
    const alice = view("user:alice");
    const bob = view("user:bob");
    const alices = await alice.put(bytes("alice's screenshot"));
    await bob.put(bytes("bob's own"));
    await sleep(5);
    await expectStowageError(
      // @ts-expect-error a view is not the whole BlobStore a collection needs
      collectGarbage({ blobs: bob, roots: [], graceMs: 0, timestampSlackMs: 0 }),
      "INVALID_INPUT",
    );
    expect(await alice.get(alices.hash)).toEqual(bytes("alice's screenshot"));
    expect(await store.has(alices.hash)).toBe(true);
  });

  it("rejects a root that is neither a hash nor a ref, deleting nothing", async () => {
    await expectStowageError(
      collectGarbage({
        blobs,
        roots: [kept, "../../etc/passwd"],
        graceMs: 0,
        timestampSlackMs: 0,
      }),
      "INVALID_INPUT",
    );
    expect(await blobs.has(unreferenced)).toBe(true);
  });

  it("removes abandoned staging objects of interrupted streamed puts", async () => {
    await blobs.objects.put(".staging/interrupted", bytes("partial"));
    await sleep(5);
    // Kept while younger than stagingGraceMs (an hour by default), whatever graceMs says.
    const young = await collectGarbage({ blobs, roots: [kept], graceMs: 0, timestampSlackMs: 0 });
    expect(young.staleStaging).toBe(0);
    expect(await blobs.objects.head(".staging/interrupted")).not.toBeNull();
    const report = await collectGarbage({
      blobs,
      roots: [kept],
      graceMs: 0,
      stagingGraceMs: 0,
      timestampSlackMs: 0,
    });
    expect(report.staleStaging).toBe(1);
    expect(await blobs.objects.head(".staging/interrupted")).toBeNull();
  });

  it("refuses a negative stagingGraceMs", async () => {
    await expectStowageError(collectGarbage({ blobs, roots: [kept], stagingGraceMs: -1 }), "INVALID_INPUT");
  });

  it("by default keeps blobs stamped within a second before the run (whole-second backends)", async () => {
    const report = await collectGarbage({ blobs, roots: [kept], graceMs: 0 });
    expect(report).toMatchObject({ young: 1, deleted: 0 });
    await sleep(1100);
    expect(await collectGarbage({ blobs, roots: [kept], graceMs: 0 })).toMatchObject({
      young: 0,
      deleted: 1,
    });
  });

  it("rejects a bad grace period", async () => {
    for (const graceMs of [-1, Number.NaN, "1h"]) {
      await expectStowageError(
        collectGarbage({ blobs, roots: [], graceMs: graceMs as number }),
        "INVALID_INPUT",
      );
    }
    await expectStowageError(collectGarbage({ blobs, roots: [], timestampSlackMs: -5 }), "INVALID_INPUT");
    expect(await blobs.has(unreferenced)).toBe(true);
  });
});
