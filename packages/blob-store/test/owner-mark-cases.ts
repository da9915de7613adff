import { setTimeout as sleep } from "node:timers/promises";
import type { ObjectStore } from "@stowage/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type BlobStore, createBlobStore } from "../src/blob-store.js";
import { collectGarbage } from "../src/gc/collect-garbage.js";
import { createOwnedBlobStore, type OwnedBlobStore } from "../src/owned-blob-store.js";
import { hookedStore, once } from "./hooked-store.js";

/** A store the owner-mark cases run over: memory, a memory store that moves as S3 does, the real S3. */
export interface OwnerMarkBackend {
  /** Skip the cases, saying why (a server that is not configured). */
  skip?: string;
  create(): Promise<{ store: ObjectStore; destroy(): Promise<void> }>;
  /** Waited after the first puts, so that a collection with `gc` finds those blobs old. */
  settleMs: number;
  /** The collection's timing options: no grace period, and the slack the backend's timestamps need. */
  gc: { graceMs: number; timestampSlackMs?: number };
}

const bytes = (text: string) => new TextEncoder().encode(text);
const MARKS_PREFIX = "blob-owners/";

/**
 * What a collection does to the owners' marks (`createOwnedBlobStore`) of the blobs it deletes:
 * laid out as a deployment lays them out (blobs and marks in one store, apart by prefix), with
 * a writer's steps injected where an owned put can race the collection.
 */
export function describeOwnerMarkCases(name: string, backend: OwnerMarkBackend): void {
  describe.skipIf(backend.skip !== undefined)(name, () => {
    let objects: ObjectStore;
    let hooks: ReturnType<typeof hookedStore>["hooks"];
    let destroy: () => Promise<void>;
    let blobs: BlobStore;
    let alice: OwnedBlobStore;
    let bob: OwnedBlobStore;
    let lines: Set<string>;
    const screenshot = bytes(`alice's screenshot ${Math.random()}`);
    let old: string;
    const markOf = (owner: string, hash: string) => `${MARKS_PREFIX}${owner}/${hash}`;
    const collect = (extra: { dryRun?: boolean } = {}) =>
      collectGarbage({
        blobs,
        roots: () => [...lines],
        ownerMarks: [{ store: objects, prefix: MARKS_PREFIX }],
        ...backend.gc,
        ...extra,
      });

    beforeEach(async () => {
      const created = await backend.create();
      destroy = created.destroy;
      const hooked = hookedStore(created.store);
      objects = hooked.store;
      hooks = hooked.hooks;
      blobs = createBlobStore({ store: objects, layout: "sharded", prefix: "blobs/" });
      const view = (owner: string) =>
        createOwnedBlobStore({ blobs, owner, marks: objects, prefix: MARKS_PREFIX });
      alice = view("user:alice");
      bob = view("user:bob");
      old = (await alice.put(screenshot)).hash;
      lines = new Set();
      await sleep(backend.settleMs);
    });

    afterEach(async () => {
      for (const key of Object.keys(hooks)) delete hooks[key as keyof typeof hooks];
      await destroy();
    });

    it("after a collection and a re-put by another owner, the first owner cannot read the bytes", async () => {
      expect(await collect()).toMatchObject({ deleted: 1, staleOwnerMarks: 1 });
      expect(await objects.head(markOf("user:alice", old))).toBeNull();

      expect((await bob.put(screenshot)).created).toBe(true);
      expect(await bob.get(old)).toEqual(screenshot);
      // Bob's put must tell alice nothing: her view has no blob, and her own put is new to her.
      expect(await alice.get(old)).toBeNull();
      expect(await alice.has(old)).toBe(false);
      expect(await alice.stat(old)).toBeNull();
      expect((await alice.list()).items).toEqual([]);
      expect((await alice.put(screenshot)).created).toBe(true);
      expect(await alice.get(old)).toEqual(screenshot);
    });

    it("removes the marks of every owner of a collected blob and keeps the marks of kept blobs", async () => {
      await bob.put(screenshot);
      const kept = (await alice.put(bytes(`kept ${Math.random()}`))).hash;
      lines.add(kept);
      await sleep(backend.settleMs); // bob's put made the blob young again
      const report = await collect();
      expect(report).toMatchObject({ deleted: 1, staleOwnerMarks: 2 });
      expect(await objects.head(markOf("user:alice", old))).toBeNull();
      expect(await objects.head(markOf("user:bob", old))).toBeNull();
      expect(await objects.head(markOf("user:alice", kept))).not.toBeNull();
      expect(await alice.get(kept)).not.toBeNull();
      expect(await bob.get(kept)).toBeNull();
      expect((await bob.list()).items).toEqual([]);
    });

    it("a dry run counts the marks it would remove and removes none", async () => {
      expect(await collect({ dryRun: true })).toMatchObject({ deleted: 1, staleOwnerMarks: 1 });
      expect(await alice.get(old)).toEqual(screenshot);
    });

    it("an owned put that lands after the blob was moved aside keeps its mark and its bytes", async () => {
      // The collection's first look at the aside copy, for its decision, comes after the move.
      hooks.head = once(
        () => `blobs/.gc/${old}`,
        async () => {
          // Alice's mark is old: her put finds it and adds none, so the mark must survive the run.
          expect((await alice.put(screenshot)).created).toBe(true);
        },
      );
      const report = await collect();
      lines.add(old); // her session line lands a moment later
      expect(report.staleOwnerMarks).toBe(0);
      expect(await alice.get(old)).toEqual(screenshot);
      expect(await objects.head(markOf("user:alice", old))).not.toBeNull();
    });

    it("an owned put that lands just before the collection removes the mark gets its mark back", async () => {
      // The collection found the blob gone and is about to remove the mark the put relied on.
      hooks.delete = once(
        () => markOf("user:alice", old),
        async () => {
          expect((await alice.put(screenshot)).created).toBe(true);
        },
      );
      const report = await collect();
      lines.add(old);
      expect(report).toMatchObject({ deleted: 1, staleOwnerMarks: 0 });
      expect(await alice.get(old)).toEqual(screenshot);
      expect(await objects.head(markOf("user:alice", old))).not.toBeNull();
    });

    it("an owned put that lands right after the collection removed the mark writes a new one", async () => {
      let removed = false;
      hooks.delete = once(
        () => markOf("user:alice", old),
        async () => {
          removed = true;
        },
      );
      // The collection's next look after removing the mark is at the blob: the put lands first.
      hooks.head = async (key) => {
        if (!removed || key !== blobs.keyFor(old)) return;
        delete hooks.head;
        expect((await alice.put(screenshot)).created).toBe(true);
      };
      await collect();
      lines.add(old);
      expect(await alice.get(old)).toEqual(screenshot);
    });
  });
}
