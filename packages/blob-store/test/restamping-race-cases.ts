import { setTimeout as sleep } from "node:timers/promises";
import type { ObjectStore } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type BlobStore, createBlobStore } from "../src/blob-store.js";
import { collectGarbage } from "../src/gc/collect-garbage.js";
import { type Hook, hookedStore, once } from "./hooked-store.js";

/** A store whose `move` restamps (S3's copy, then delete), with a way into the gap between the two. */
export interface RestampingBackend {
  /** Skip the cases, saying why (a server that is not configured). */
  skip?: string;
  create(): Promise<{
    store: ObjectStore;
    /** Runs `hook` inside each move, after the copy and before the source (`key`) is deleted. */
    setBetweenCopyAndDelete(hook: Hook | undefined): void;
    destroy(): Promise<void>;
  }>;
  /**
   * Waited after the first put, so that its blob and touch record are old to a collection with
   * `gc`; long enough that a collection with half of it as its grace period still sees them old.
   */
  settleMs: number;
  /** The collection's timing options: no grace period, and the slack the backend's timestamps need. */
  gc: { graceMs: number; timestampSlackMs?: number };
}

const bytes = (text: string) => new TextEncoder().encode(text);

/**
 * The garbage-collection races on a store whose move gives a new timestamp (S3), with another
 * writer's steps injected at each point of the protocol: run over a memory store that moves as
 * S3 does and over the real server.
 */
export function describeRestampingRaces(name: string, backend: RestampingBackend): void {
  describe.skipIf(backend.skip !== undefined)(name, () => {
    let objects: ObjectStore;
    let hooks: ReturnType<typeof hookedStore>["hooks"];
    let setBetweenCopyAndDelete: (hook: Hook | undefined) => void;
    let destroy: () => Promise<void>;
    let blobs: BlobStore;
    let old: string;
    let lines: Set<string>;
    const roots = () => [...lines];
    const screenshot = bytes(`an old screenshot ${Math.random()}`);
    const collect = (extra: { dryRun?: boolean; graceMs?: number } = {}) =>
      collectGarbage({ blobs, roots, ...backend.gc, ...extra });
    // A grace period that the first put has outlived and a put made now has not.
    const halfTheSettling = () => ({ graceMs: backend.settleMs / 2 });

    beforeEach(async () => {
      const created = await backend.create();
      expect(created.store.capabilities.moveKeepsLastModified).toBe(false);
      ({ setBetweenCopyAndDelete, destroy } = created);
      const hooked = hookedStore(created.store);
      objects = hooked.store;
      hooks = hooked.hooks;
      blobs = createBlobStore({ store: objects, layout: "sharded" });
      old = (await blobs.put(screenshot)).hash;
      lines = new Set();
      await sleep(backend.settleMs);
    });

    afterEach(async () => {
      for (const key of Object.keys(hooks)) delete hooks[key as keyof typeof hooks];
      setBetweenCopyAndDelete(undefined);
      await destroy();
    });

    it("still deletes unreferenced old blobs and keeps referenced ones", async () => {
      lines.add((await blobs.put(bytes("kept"))).hash);
      const report = await collect();
      expect(report).toMatchObject({ deleted: 1, restored: 0 });
      expect(await blobs.has(old)).toBe(false);
      expect(await blobs.has([...lines][0]!)).toBe(true);
    });

    it("a ref written before the second reading of the roots keeps the candidate", async () => {
      hooks.move = once(
        () => blobs.keyFor(old),
        async () => {
          lines.add(old);
        },
      );
      expect(await collect()).toMatchObject({ deleted: 0, restored: 1 });
      expect(await blobs.has(old)).toBe(true);
    });

    it("a writer's put just before the move keeps the blob, though its ref is written after the collection", async () => {
      // The move's copy restamps, so the collection cannot see the put in the timestamp it moved;
      // the writer's touch record is what it finds.
      hooks.move = once(
        () => blobs.keyFor(old),
        async () => {
          expect((await blobs.put(screenshot)).created).toBe(false);
        },
      );
      const report = await collect();
      lines.add(old); // the session line lands a moment later
      expect(report).toMatchObject({ deleted: 0, restored: 1 });
      expect(await blobs.get(old)).toEqual(screenshot);
    });

    it("a writer's put between the move's copy and its delete keeps the blob", async () => {
      // The writer's look and record both come before the move deletes the source.
      setBetweenCopyAndDelete(
        once(
          () => blobs.keyFor(old),
          async () => {
            expect((await blobs.put(screenshot)).created).toBe(false);
          },
        ),
      );
      const report = await collect();
      lines.add(old);
      expect(report).toMatchObject({ deleted: 0, restored: 1 });
      expect(await blobs.get(old)).toEqual(screenshot);
    });

    it("a collection that takes the blob between a put's look and its record is seen by the put, which writes again", async () => {
      hooks.put = once(
        () => `.touched/${old}`,
        async () => {
          // The whole collection runs in the gap; the only record it finds is the first put's, old.
          expect(await collect()).toMatchObject({ deleted: 1 });
        },
      );
      const put = await blobs.put(screenshot);
      lines.add(put.hash);
      expect(put.created).toBe(true);
      expect(await blobs.get(old)).toEqual(screenshot);
    });

    it("a streamed put whose blob a collection holds aside at its check puts the aside copy back", async () => {
      hooks.put = once(
        () => `.touched/${old}`,
        async () => {
          await objects.move(blobs.keyFor(old), `.gc/${old}`); // a collection mid-run
        },
      );
      expect((await blobs.put(new Blob([screenshot]).stream())).hash).toBe(old);
      expect(await objects.head(blobs.keyFor(old))).not.toBeNull();
      expect(await objects.head(`.gc/${old}`)).toBeNull();
    });

    it("a streamed put whose blob a collection deleted before its record fails instead of reporting it stored", async () => {
      hooks.put = once(
        () => `.touched/${old}`,
        async () => {
          await sleep(backend.settleMs); // the stream's move just gave the blob a new timestamp
          expect(await collect()).toMatchObject({ deleted: 1 });
        },
      );
      const error = await expectStowageError(blobs.put(new Blob([screenshot]).stream()), "CONFLICT");
      expect(error.reason).toBe("COLLECTED_DURING_PUT");
      expect(error.details).toEqual({ hash: old });
    });

    it("stat and has see a blob a collection holds aside", async () => {
      hooks.head = once(
        () => `.gc/${old}`,
        async () => {
          expect(await objects.head(blobs.keyFor(old))).toBeNull();
          expect(await blobs.stat(old)).toMatchObject({ hash: old, size: screenshot.byteLength });
          expect(await blobs.has(old)).toBe(true);
          expect(await blobs.get(old)).toEqual(screenshot);
        },
      );
      expect(await collect()).toMatchObject({ deleted: 1 });
    });

    it("a put of a stored blob copies nothing: its touch record alone keeps the blob young", async () => {
      const before = (await blobs.stat(old))!.lastModified;
      const touched: string[] = [];
      hooks.touch = (key) => {
        touched.push(key);
      };
      expect((await blobs.put(screenshot)).created).toBe(false);
      expect(touched).toEqual([]); // on S3 a touch is a CopyObject of the whole blob
      expect((await blobs.stat(old))!.lastModified).toEqual(before);
      expect(await collect(halfTheSettling())).toMatchObject({ young: 1, deleted: 0, restored: 0 });
    });

    it("a blob's touch record goes with it: when a collection deletes it, when it is deleted, and when it is gone", async () => {
      const other = (await blobs.put(bytes("other"))).hash;
      const third = (await blobs.put(bytes("third"))).hash;
      lines.add(other).add(third);
      const records = async () =>
        (await objects.list({ prefix: ".touched/" })).items.map((item) => item.key).sort();
      expect(await records()).toEqual([`.touched/${old}`, `.touched/${other}`, `.touched/${third}`].sort());
      await blobs.delete(other);
      await objects.delete(blobs.keyFor(third)); // removed by some other means
      expect(await collect()).toMatchObject({ deleted: 1, staleTouchRecords: 1 });
      expect(await records()).toEqual([]);
    });

    it("a dry run counts a blob with a young touch record as young and removes nothing", async () => {
      await objects.put(`.touched/${old}`, new Uint8Array(0));
      expect(await collect({ dryRun: true, ...halfTheSettling() })).toMatchObject({ deleted: 0, young: 1 });
      expect(await blobs.has(old)).toBe(true);
    });
  });
}
