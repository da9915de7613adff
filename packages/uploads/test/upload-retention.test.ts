// The retention sweep against uploads that change while it runs: an agent uploading the same
// filename again between the sweep's listing and its delete keeps its new file. `artifacts` in keys
// is the design document's wire name.
import { utimes } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Principal } from "@stowage/core";
import { sha256Hex } from "@stowage/core";
import { createFsObjectStore } from "@stowage/storage-fs";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { createUploadService } from "../src/index.js";
import { type FetchHandler, startFetchServer } from "./support/upload-server.js";

const DAY_MS = 24 * 60 * 60 * 1000;
const alice: Principal = { kind: "user", id: "alice" };
const KEY = "sessions/user/alice/s1/artifacts/shot.png";

let handle: FetchHandler = () => Promise.reject(new Error("nothing mounted yet"));
const server = await startFetchServer((request) => handle(request));
const fsStore = createFsObjectStore({
  root: await tempDirectory("stowage-upload-retention-"),
  directUrls: { baseUrl: `${server.url}direct`, secret: "a test secret of at least 32 bytes!" },
});
handle = (request) => fsStore.handleDirectRequest!(request);
const bytes = (text: string) => new TextEncoder().encode(text);

describe("the retention sweep", () => {
  it("keeps a file uploaded again between its listing and its delete, and its quota", async () => {
    let afterListingShot: () => Promise<void> = async () => {};
    // The fs store, with a hook right after the listing has passed the old upload: the agent's
    // new upload of the same filename lands there, before the sweep deletes what it listed.
    const store: typeof fsStore = {
      ...fsStore,
      async *iterate(options) {
        for await (const item of fsStore.iterate(options)) {
          yield item;
          if (item.key === KEY) await afterListingShot();
        }
      },
    };
    const uploads = createUploadService({
      store,
      sessionExists: (principal, id) => principal.id === "alice" && id === "s1",
    });
    // An upload 40 days old, then a sweep of uploads older than 30 days.
    await fsStore.put(KEY, bytes("old screenshot"));
    const old = new Date(Date.now() - 40 * DAY_MS);
    await utimes(fileURLToPath(fsStore.uriFor(KEY)), old, old);
    const fresh = bytes("the screenshot taken again");
    afterListingShot = async () => {
      afterListingShot = async () => {};
      const grant = await uploads.requestUpload({
        principal: alice,
        sessionId: "s1",
        filename: "shot.png",
        contentType: "image/png",
        fileSize: fresh.byteLength,
        sha256: sha256Hex(fresh),
      });
      const put = await fetch(grant.url, { method: "PUT", headers: grant.headers, body: fresh });
      expect(put.status).toBe(200);
      await uploads.completeUpload(alice, "s1", "shot.png");
    };

    const swept = await uploads.sweepUploads({ olderThanDays: 30 });
    expect(swept).toMatchObject({ uploads: [], deletedBytes: 0 });
    expect(await fsStore.get(KEY)).toEqual(fresh);
    expect((await uploads.listUploads(alice, "s1")).map(({ filename, size }) => [filename, size])).toEqual([
      ["shot.png", fresh.byteLength],
    ]);
    expect(await uploads.usage(alice, "s1")).toMatchObject({ usedBytes: fresh.byteLength, objects: 1 });

    // Left alone, the same file is swept once it is old in its turn.
    const later = new Date(Date.now() + 31 * DAY_MS);
    const next = await uploads.sweepUploads({ olderThanDays: 30, now: later });
    expect(next).toMatchObject({ uploads: [{ key: KEY, size: fresh.byteLength }] });
    expect(await fsStore.head(KEY)).toBeNull();
    expect(await uploads.usage(alice, "s1")).toMatchObject({ usedBytes: 0, objects: 0 });
  });
});

describe("retentionDays", () => {
  it("makes every listed upload report its expiresAt: its last change plus the retention", async () => {
    const root = await tempDirectory("stowage-upload-expiry-");
    const store = createFsObjectStore({
      root,
      directUrls: { baseUrl: `${server.url}direct`, secret: "a test secret of at least 32 bytes!" },
    });
    const exists = (principal: Principal, id: string) => principal.id === "alice" && id === "s1";
    const kept = createUploadService({ store, sessionExists: exists });
    const retained = createUploadService({ store, sessionExists: exists, retentionDays: 30 });
    await store.put(KEY, bytes("a screenshot"));
    const changed = new Date(Date.now() - 10 * DAY_MS);
    await utimes(fileURLToPath(store.uriFor!(KEY)), changed, changed);
    const [listed] = await retained.listUploads(alice, "s1");
    expect(listed!.expiresAt!.getTime() - listed!.lastModified.getTime()).toBe(30 * DAY_MS);
    expect(Math.abs(listed!.lastModified.getTime() - changed.getTime())).toBeLessThan(1000);
    expect((await kept.listUploads(alice, "s1"))[0]).not.toHaveProperty("expiresAt");
    for (const retentionDays of [0, -1, Number.NaN, "30" as never]) {
      expect(() => createUploadService({ store, sessionExists: exists, retentionDays })).toThrowError(
        expect.objectContaining({ code: "INVALID_INPUT" }),
      );
    }
  });
});

describe("onSwept", () => {
  it("is told each session's deleted uploads before the sweep goes on, never in a dry run; a throw stops it", async () => {
    const root = await tempDirectory("stowage-upload-swept-");
    const store = createFsObjectStore({
      root,
      directUrls: { baseUrl: `${server.url}direct`, secret: "a test secret of at least 32 bytes!" },
    });
    const uploads = createUploadService({ store, sessionExists: () => true });
    const old = new Date(Date.now() - 40 * DAY_MS);
    for (const key of [
      "sessions/user/alice/s1/artifacts/a.txt",
      "sessions/user/alice/s1/artifacts/b.txt",
      "sessions/user/bob/s2/artifacts/c.txt",
    ]) {
      await store.put(key, bytes(key));
      await utimes(fileURLToPath(store.uriFor!(key)), old, old);
    }
    const told: string[][] = [];
    const onSwept = (gone: readonly { filename: string }[]) => void told.push(gone.map((u) => u.filename));
    await uploads.sweepUploads({ olderThanDays: 30, dryRun: true, onSwept });
    expect(told).toEqual([]);
    const failure = new Error("audit unavailable");
    await expect(
      uploads.sweepUploads({
        olderThanDays: 30,
        onSwept: () => {
          throw failure;
        },
      }),
    ).rejects.toBe(failure);
    // The first session went; the sweep stopped before the second.
    expect((await store.list({ prefix: "sessions/user/bob/" })).items).toHaveLength(1);
    const result = await uploads.sweepUploads({ olderThanDays: 30, onSwept });
    expect(told).toEqual([["c.txt"]]);
    expect(result.uploads.map((upload) => upload.filename)).toEqual(["c.txt"]);
    await expect(uploads.sweepUploads({ olderThanDays: 30, onSwept: 1 as never })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
  });
});
