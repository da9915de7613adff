import { randomUUID } from "node:crypto";
import { collectGarbage, createBlobStore, scanObjectStoreForBlobRefs } from "@stowage/blob-store";
import { createFsObjectStore } from "@stowage/storage-fs";
import { claudeScreenshotSession, runChild, screenshotPng, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { createObjectSessionStore } from "../../src/session-store/object-session-store.js";
import type { SessionStoreEntry } from "../../src/session-store/types.js";

const TURNS = 12;

describe("garbage collection of blobs with an object SessionStore's parts as a root", () => {
  it("a collection in another process than the appends deletes nothing a later load needs, and what nothing references", async () => {
    const root = await tempDirectory("stowage-session-store-gc-");
    const objects = createFsObjectStore({ root, fsync: false });
    const blobs = createBlobStore({ store: objects, prefix: "blobs/" });
    // The parts hold their refs as text: the one root source a deployment adds for them.
    const roots = [
      {
        name: "session store",
        refs: () => scanObjectStoreForBlobRefs(objects, { prefix: "session-store/" }),
      },
    ];
    const orphan = await blobs.put(screenshotPng(99, 64, 40));
    const sessionId = randomUUID();
    const appending = runChild(new URL("../children/session-store-append-images.ts", import.meta.url), [
      root,
      sessionId,
      String(TURNS),
    ]);
    // Collections while the other process appends and compacts: its blobs are young, and those
    // already referenced are roots (the parts that held the images refer to them as text before
    // the compaction stores them; the default grace period covers a blob stored before its range).
    let collections = 0;
    let done = false;
    void appending.finally(() => {
      done = true;
    });
    while (!done) {
      const report = await collectGarbage({ blobs, roots });
      expect(report.deleted).toBe(0);
      collections++;
    }
    expect(await appending, (await appending).stderr).toMatchObject({ code: 0 });
    expect(collections).toBeGreaterThan(0);
    // Each compaction moved the images its parts held into the blob store.
    expect((await blobs.list()).items).toHaveLength(TURNS + 1);

    // Every append has returned: with no grace period, only the blob no part references goes.
    const report = await collectGarbage({ blobs, roots, graceMs: 0, timestampSlackMs: 0 });
    expect(report.deleted).toBe(1);
    expect(await blobs.has(orphan.hash)).toBe(false);
    expect(report.rootRefsBySource).toEqual({ "session store": TURNS });

    const expected = claudeScreenshotSession({ turns: TURNS, screenshots: TURNS, width: 320, height: 200 });
    const store = createObjectSessionStore({ store: objects, blobs });
    const key = { projectKey: "proj", sessionId };
    expect(JSON.stringify(await store.load(key))).toBe(JSON.stringify(expected));

    // Deleted, the session waits in the store's trash (under the same prefix): its images stay
    // roots, and a restore loads it whole.
    await store.delete(key);
    expect(await store.load(key)).toBeNull();
    const trashed = await collectGarbage({ blobs, roots, graceMs: 0, timestampSlackMs: 0 });
    expect(trashed.deleted).toBe(0);
    expect(trashed.rootRefsBySource).toEqual({ "session store": TURNS });
    const [item] = await store.listTrash("proj");
    await store.restoreFromTrash("proj", item!.trashId);
    expect(JSON.stringify(await store.load(key))).toBe(JSON.stringify(expected));

    // Once it is purged (or deleted with no trash days) its images are garbage.
    await store.delete(key);
    await store.purgeFromTrash("proj", (await store.listTrash("proj"))[0]!.trashId);
    const after = await collectGarbage({ blobs, roots, graceMs: 0, timestampSlackMs: 0 });
    expect(after.deleted).toBe(TURNS);
    expect((await blobs.list()).items).toEqual([]);
  });

  it("three processes appending the same screenshots to one session, compacting as they go: every image comes back, each stored once", async () => {
    const root = await tempDirectory("stowage-session-store-held-procs-");
    const objects = createFsObjectStore({ root, fsync: false });
    const sessionId = randomUUID();
    const workers = ["a", "b", "c"];
    const child = new URL("../children/session-store-append-images.ts", import.meta.url);
    const results = await Promise.all(
      workers.map((worker) => runChild(child, [root, sessionId, String(TURNS), worker, "2"])),
    );
    for (const result of results) expect(result, result.stderr).toMatchObject({ code: 0 });
    const blobs = createBlobStore({ store: objects, prefix: "blobs/" });
    const loaded = (await createObjectSessionStore({ store: objects, blobs }).load({
      projectKey: "proj",
      sessionId,
    }))!;
    const expected = claudeScreenshotSession({ turns: TURNS, screenshots: TURNS, width: 320, height: 200 });
    for (const worker of workers) {
      const own = loaded.filter((entry) => String(entry.uuid).startsWith(`${worker}-`));
      const sent = expected.map((line) => ({ ...line, uuid: `${worker}-${line.uuid}` }));
      expect(JSON.stringify(own)).toBe(JSON.stringify(sent));
    }
    expect(loaded).toHaveLength(3 * expected.length);
    // Compacted into the blob store, once per distinct screenshot whoever appended it.
    await createObjectSessionStore({ store: objects, blobs }).compact({ projectKey: "proj", sessionId });
    expect((await blobs.list()).items).toHaveLength(TURNS);
  });

  it("compacted parts are a root too", async () => {
    const objects = createFsObjectStore({
      root: await tempDirectory("stowage-session-store-gc-compact-"),
      fsync: false,
    });
    const blobs = createBlobStore({ store: objects, prefix: "blobs/" });
    const store = createObjectSessionStore({ store: objects, blobs, compactAfterParts: 2 });
    const key = { projectKey: "proj", sessionId: "compacted" };
    const lines = claudeScreenshotSession({
      turns: 5,
      screenshots: 5,
      width: 320,
      height: 200,
    }) as SessionStoreEntry[];
    for (let start = 0; start < lines.length; start += 3)
      await store.append(key, lines.slice(start, start + 3));
    await store.compact(key);
    const report = await collectGarbage({
      blobs,
      roots: [
        {
          name: "session store",
          refs: () => scanObjectStoreForBlobRefs(objects, { prefix: "session-store/" }),
        },
      ],
      graceMs: 0,
      timestampSlackMs: 0,
    });
    expect(report).toMatchObject({ deleted: 0, rootRefsBySource: { "session store": 5 } });
    expect(JSON.stringify(await store.load(key))).toBe(JSON.stringify(lines));
  });
});
