import { setTimeout as sleep } from "node:timers/promises";
import { createMemoryObjectStore } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { createBlobStore } from "../../src/blob-store.js";
import { collectGarbage, type GarbageCollectionProgress } from "../../src/gc/collect-garbage.js";

const bytes = (text: string) => new TextEncoder().encode(text);

/** A store of `referenced` kept blobs and `orphans` unreferenced ones, all past a 0 ms grace. */
async function storeWith(referenced: number, orphans: number) {
  const blobs = createBlobStore({ store: createMemoryObjectStore(), layout: "sharded" });
  const roots: string[] = [];
  for (let i = 0; i < referenced; i++) roots.push((await blobs.put(bytes(`kept ${i}`))).ref);
  for (let i = 0; i < orphans; i++) await blobs.put(bytes(`orphan ${i}`));
  await sleep(5);
  return { blobs, roots };
}

describe("collectGarbage's onProgress", () => {
  it.each([false, true])(
    "reports the roots, each blob scanned, then each candidate decided (dry run: %s)",
    async (dryRun) => {
      const { blobs, roots } = await storeWith(3, 2);
      const seen: GarbageCollectionProgress[] = [];
      const report = await collectGarbage({
        blobs,
        roots,
        graceMs: 0,
        timestampSlackMs: 0,
        dryRun,
        onProgress: (progress) => seen.push(progress),
      });
      expect(report).toMatchObject({ scanned: 5, deleted: 2 });
      expect(seen.filter((p) => p.step === "roots")).toEqual([
        { step: "roots", done: 0 },
        { step: "roots", done: 3 },
      ]);
      expect(seen.filter((p) => p.step === "scan").map((p) => p.done)).toEqual([1, 2, 3, 4, 5]);
      expect(seen.filter((p) => p.step === "collect")).toEqual([
        { step: "collect", done: 0, total: 2 },
        { step: "collect", done: 1, total: 2 },
        { step: "collect", done: 2, total: 2 },
      ]);
      // In that order: roots, scan, collect.
      const steps = seen.map((p) => p.step).filter((step, i, all) => step !== all[i - 1]);
      expect(steps).toEqual(["roots", "scan", "collect"]);
    },
  );

  it("nothing to collect: the collect step is not reported", async () => {
    const { blobs, roots } = await storeWith(2, 0);
    const seen: GarbageCollectionProgress[] = [];
    await collectGarbage({ blobs, roots, graceMs: 0, onProgress: (p) => seen.push(p) });
    expect(seen.some((p) => p.step === "collect")).toBe(false);
  });

  it.each([1, "yes", {}, null])("refuses onProgress %j that is not a function", async (onProgress) => {
    const { blobs, roots } = await storeWith(1, 0);
    await expectStowageError(
      collectGarbage({ blobs, roots, onProgress: onProgress as never }),
      "INVALID_INPUT",
    );
  });

  it("an onProgress that throws stops the run: the candidate not yet decided is put back", async () => {
    const { blobs, roots } = await storeWith(1, 2);
    const before = [];
    for await (const blob of blobs.iterate()) before.push(blob.hash);
    await expect(
      collectGarbage({
        blobs,
        roots,
        graceMs: 0,
        timestampSlackMs: 0,
        onProgress: (p) => {
          if (p.step === "collect" && p.done === 1) throw new Error("the terminal went away");
        },
      }),
    ).rejects.toThrow("the terminal went away");
    const after = [];
    for await (const blob of blobs.iterate()) after.push(blob.hash);
    // The candidate decided before the throw was deleted; the undecided one was put back.
    expect(after).toHaveLength(before.length - 1);
  });
});
