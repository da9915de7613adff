// Uploads past retention: hidden from listings and downloads, listed for their owner, restored by a
// touch, purged with the ledger following; the sweep still takes them. Times are set on the files
// (utimes), never measured. `artifacts` in keys is the design document's wire name.
import { utimes } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { ObjectStore, Principal } from "@stowage/core";
import { createFsObjectStore } from "@stowage/storage-fs";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { createUploadPolicy, createUploadService } from "../src/index.js";
import { uncheckedStore } from "./support/unchecked-store.js";
import { type FetchHandler, startFetchServer } from "./support/upload-server.js";

const DAY_MS = 24 * 60 * 60 * 1000;
const alice: Principal = { kind: "user", id: "alice" };
const bob: Principal = { kind: "user", id: "bob" };
const keyOf = (owner: string, sessionId: string, filename: string) =>
  `sessions/user/${owner}/${sessionId}/artifacts/${filename}`;
const bytes = (text: string) => new TextEncoder().encode(text);

let handle: FetchHandler = () => Promise.reject(new Error("nothing mounted yet"));
const server = await startFetchServer((request) => handle(request));

/** A service keeping uploads 30 days over a fresh fs store, and a way to age a file. */
async function retained() {
  const store = createFsObjectStore({
    root: await tempDirectory("stowage-expired-uploads-"),
    directUrls: { baseUrl: `${server.url}direct`, secret: "a test secret of at least 32 bytes!" },
  });
  handle = (request) => store.handleDirectRequest!(request);
  const uploads = createUploadService({
    store,
    sessionExists: (principal, id) => ["s1", "s2"].includes(id) && ["alice", "bob"].includes(principal.id),
    retentionDays: 30,
  });
  const put = async (key: string, text: string, ageDays: number) => {
    await store.put(key, bytes(text));
    const at = new Date(Date.now() - ageDays * DAY_MS);
    await utimes(fileURLToPath(store.uriFor!(key)), at, at);
  };
  return { store, uploads, put };
}

describe("uploads past retention", () => {
  it("are neither listed nor served, still counted, and listed for their owner alone", async () => {
    const { store, uploads, put } = await retained();
    await put(keyOf("alice", "s1", "old.png"), "forty days old", 40);
    await put(keyOf("alice", "s1", "new.png"), "a day old", 1);
    await put(keyOf("alice", "s2", "older.txt"), "sixty days", 60);
    await put(keyOf("bob", "s1", "bobs.png"), "bob's, old", 45);

    expect((await uploads.listUploads(alice, "s1")).map((upload) => upload.filename)).toEqual(["new.png"]);
    await expect(uploads.requestDownload(alice, "s1", "old.png")).rejects.toMatchObject({
      code: "NOT_FOUND",
      reason: "UPLOAD_EXPIRED",
    });
    // Served through the store's own URL route too: the check refuses the expired key.
    await expect(uploads.checkDirectDownload({ key: keyOf("alice", "s1", "old.png") })).rejects.toMatchObject(
      {
        code: "NOT_FOUND",
        reason: "UPLOAD_EXPIRED",
      },
    );
    await expect(
      uploads.checkDirectDownload({ key: keyOf("alice", "s1", "new.png") }),
    ).resolves.toBeUndefined();
    // Bytes in a trash still take the session's room.
    expect(await uploads.usage(alice, "s1")).toMatchObject({ usedBytes: 14 + 9, objects: 2 });

    const expired = await uploads.listExpiredUploads(alice);
    expect(expired.map(({ sessionId, filename, size }) => [sessionId, filename, size])).toEqual([
      ["s1", "old.png", 14],
      ["s2", "older.txt", 10],
    ]);
    expect(expired[0]!.expiresAt.getTime() - expired[0]!.lastModified.getTime()).toBe(30 * DAY_MS);
    expect((await uploads.listExpiredUploads(bob)).map((upload) => upload.filename)).toEqual(["bobs.png"]);
    expect(await store.get(keyOf("alice", "s1", "old.png"))).toEqual(bytes("forty days old"));
    // One session's, and one upload's.
    expect((await uploads.listExpiredUploads(alice, { sessionId: "s2" })).map((u) => u.filename)).toEqual([
      "older.txt",
    ]);
    expect(
      (await uploads.listExpiredUploads(alice, { sessionId: "s1", filename: "old.png" })).map((u) => u.size),
    ).toEqual([14]);
    expect(await uploads.listExpiredUploads(alice, { sessionId: "s1", filename: "new.png" })).toEqual([]);
    expect(await uploads.listExpiredUploads(alice, { sessionId: "s1", filename: "none.png" })).toEqual([]);
  });

  it("come back with a restore, byte for byte, their retention started again", async () => {
    const { store, uploads, put } = await retained();
    const key = keyOf("alice", "s1", "old.png");
    await put(key, "forty days old", 40);
    // Another principal's restore of the same names finds nothing of theirs.
    expect(await uploads.restoreExpiredUpload(bob, "s1", "old.png")).toBe(false);
    expect(await uploads.restoreExpiredUpload(alice, "s1", "old.png")).toBe(true);
    const [listed] = await uploads.listUploads(alice, "s1");
    expect(listed).toMatchObject({ filename: "old.png", size: 14 });
    expect(listed!.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 29 * DAY_MS);
    expect(await store.get(key)).toEqual(bytes("forty days old"));
    await expect(uploads.requestDownload(alice, "s1", "old.png")).resolves.toHaveProperty("url");
    // A live upload is not in the trash: a second restore and a purge find nothing to do.
    expect(await uploads.restoreExpiredUpload(alice, "s1", "old.png")).toBe(false);
    expect(await uploads.purgeExpiredUpload(alice, "s1", "old.png")).toBeNull();
    expect(await store.get(key)).toEqual(bytes("forty days old"));
    expect(await uploads.listExpiredUploads(alice)).toEqual([]);
  });

  it("are not overwritten by an upload of the same name: CONFLICT until restored or purged", async () => {
    const { store, uploads, put } = await retained();
    const key = keyOf("alice", "s1", "old.png");
    await put(key, "forty days old", 40);
    const request = {
      principal: alice,
      sessionId: "s1",
      filename: "old.png",
      contentType: "image/png",
      fileSize: 3,
    };
    await expect(uploads.requestUpload(request)).rejects.toMatchObject({
      code: "CONFLICT",
      reason: "UPLOAD_IN_TRASH",
      details: { filename: "old.png" },
    });
    expect(await store.get(key)).toEqual(bytes("forty days old"));
    // Bob's session of the same id and name is his own: nothing of alice's is in his way.
    await expect(uploads.requestUpload({ ...request, principal: bob })).resolves.toHaveProperty("url");
    // Another name, or the same name once restored (live again, so an upload replaces it as ever).
    await expect(uploads.requestUpload({ ...request, filename: "other.png" })).resolves.toHaveProperty("url");
    expect(await uploads.restoreExpiredUpload(alice, "s1", "old.png")).toBe(true);
    await expect(uploads.requestUpload(request)).resolves.toHaveProperty("url");
  });

  it("go at once with a purge, the ledger following; a missing one is null", async () => {
    const { store, uploads, put } = await retained();
    const key = keyOf("alice", "s1", "old.png");
    await put(key, "forty days old", 40);
    await put(keyOf("alice", "s1", "new.png"), "a day old", 1);
    expect(await uploads.usage(alice, "s1")).toMatchObject({ usedBytes: 23 });
    expect(await uploads.purgeExpiredUpload(bob, "s1", "old.png")).toBeNull();
    expect(await uploads.purgeExpiredUpload(alice, "s1", "old.png")).toBe(14);
    expect(await store.head(key)).toBeNull();
    expect(await uploads.usage(alice, "s1")).toMatchObject({ usedBytes: 9, objects: 1 });
    expect(await uploads.purgeExpiredUpload(alice, "s1", "old.png")).toBeNull();
    expect(await uploads.restoreExpiredUpload(alice, "s1", "old.png")).toBe(false);
  });

  it("are not listed where uploads are kept (no retentionDays)", async () => {
    const { store, put } = await retained();
    await put(keyOf("alice", "s1", "old.png"), "forty days old", 400);
    const kept = createUploadService({ store, sessionExists: () => true });
    expect(kept.retentionDays).toBeUndefined();
    expect(await kept.listExpiredUploads(alice)).toEqual([]);
    expect(await kept.restoreExpiredUpload(alice, "s1", "old.png")).toBe(false);
    expect((await kept.listUploads(alice, "s1")).map((upload) => upload.filename)).toEqual(["old.png"]);
  });

  it.each([
    ["a traversal session id", alice, "../bob", "old.png"],
    ["a session id with a slash", alice, "s1/artifacts", "old.png"],
    ["an empty filename", alice, "s1", ""],
    ["a traversal filename", alice, "s1", "../old.png"],
    ["a filename with a slash", alice, "s1", "a/b.png"],
    ["a NUL in the filename", alice, "s1", "old\u0000.png"],
    ["a principal without an id", { kind: "user" } as Principal, "s1", "old.png"],
    ["a principal of another kind", { kind: "root", id: "x" } as unknown as Principal, "s1", "old.png"],
  ])("refuse %s with INVALID_INPUT and change nothing", async (_, principal, sessionId, filename) => {
    const { store, uploads, put } = await retained();
    const key = keyOf("alice", "s1", "old.png");
    await put(key, "forty days old", 40);
    await expect(uploads.restoreExpiredUpload(principal, sessionId, filename)).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    await expect(uploads.purgeExpiredUpload(principal, sessionId, filename)).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    await expect(uploads.listExpiredUploads(principal, { sessionId, filename })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
    expect(await store.get(key)).toEqual(bytes("forty days old"));
    expect((await uploads.listExpiredUploads(alice)).map((upload) => upload.filename)).toEqual(["old.png"]);
  });

  it("refuse a filename without its session", async () => {
    const { uploads } = await retained();
    await expect(uploads.listExpiredUploads(alice, { filename: "old.png" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
  });
  it("a grant refused over a trashed upload keeps no record or reservation; a new name's grant reads no trash mark", async () => {
    const { store: fsStore, put } = await retained();
    // As Ceph RGW 16: every URL gets a record, written beside the grant's trash check.
    const unchecked = uncheckedStore(fsStore);
    const iterated: string[] = [];
    const store: ObjectStore = {
      ...unchecked,
      iterate(options) {
        iterated.push(options?.prefix ?? "");
        return unchecked.iterate(options);
      },
    };
    const uploads = createUploadService({
      store,
      sessionExists: (_principal, id) => id === "s1",
      retentionDays: 30,
    });
    await put(keyOf("alice", "s1", "old.png"), "forty days old", 40);
    const request = (filename: string, fileSize = 3) => ({
      principal: alice,
      sessionId: "s1",
      filename,
      contentType: "image/png",
      fileSize,
    });
    const before = await uploads.usage(alice, "s1");
    await expect(uploads.requestUpload(request("old.png"))).rejects.toMatchObject({
      reason: "UPLOAD_IN_TRASH",
    });
    expect((await fsStore.list({ prefix: "sessions/user/alice/s1/upload-records/" })).items).toEqual([]);
    expect(await uploads.usage(alice, "s1")).toEqual(before);
    expect(await fsStore.get(keyOf("alice", "s1", "old.png"))).toEqual(bytes("forty days old"));
    // Refused by the quota too (the trashed upload still counts): the trash's answer comes first.
    const full = createUploadService({
      store,
      sessionExists: (_principal, id) => id === "s1",
      retentionDays: 30,
      policy: createUploadPolicy({ maxTotalSizeBytes: 15 }),
    });
    await expect(full.requestUpload(request("old.png", 20))).rejects.toMatchObject({
      reason: "UPLOAD_IN_TRASH",
    });
    await expect(full.requestUpload(request("new.png", 20))).rejects.toMatchObject({
      code: "QUOTA_EXCEEDED",
    });

    iterated.length = 0;
    await uploads.requestUpload(request("new.png"));
    expect(iterated.filter((prefix) => prefix.includes("upload-trash"))).toEqual([]);
    expect(
      (await fsStore.list({ prefix: "sessions/user/alice/s1/upload-records/new.png/" })).items,
    ).toHaveLength(1);
  });
});

describe("a session's uploads deleted into the trash", () => {
  it.each([
    ["with a retention", 30],
    ["where uploads are kept", undefined],
  ])(
    "%s: hidden, counted, listed with who deleted them, restored one by one, swept after their stay",
    async (_name, retentionDays) => {
      const { store, uploads: retainedUploads, put } = await retained();
      const uploads =
        retentionDays === undefined
          ? createUploadService({
              store,
              sessionExists: (principal, id) =>
                ["s1", "s2"].includes(id) && ["alice", "bob"].includes(principal.id),
            })
          : retainedUploads;
      await put(keyOf("alice", "s1", "a.png"), "first", 2);
      await put(keyOf("alice", "s1", "b.png"), "second!", 1);
      await put(keyOf("bob", "s1", "bobs.png"), "bob's", 1);
      expect(await uploads.trashSessionUploads(alice, "s1", { by: "key:k1" })).toMatchObject({
        uploads: 2,
        bytes: 12,
      });
      expect(await uploads.listUploads(alice, "s1")).toEqual([]);
      await expect(uploads.requestDownload(alice, "s1", "a.png")).rejects.toMatchObject({
        reason: "UPLOAD_EXPIRED",
      });
      await expect(uploads.checkDirectDownload({ key: keyOf("alice", "s1", "b.png") })).rejects.toMatchObject(
        {
          reason: "UPLOAD_EXPIRED",
        },
      );
      expect(await uploads.usage(alice, "s1")).toMatchObject({ usedBytes: 12, objects: 2 });
      const expired = await uploads.listExpiredUploads(alice);
      expect(expired.map(({ filename, deletedBy }) => [filename, deletedBy])).toEqual([
        ["a.png", "key:k1"],
        ["b.png", "key:k1"],
      ]);
      // Bob's session of the same id is his own.
      expect((await uploads.listUploads(bob, "s1")).map((upload) => upload.filename)).toEqual(["bobs.png"]);
      // Not overwritten by an upload of its name; one of another name, made after, is live.
      const request = {
        principal: alice,
        sessionId: "s1",
        filename: "a.png",
        contentType: "image/png",
        fileSize: 3,
      };
      await expect(uploads.requestUpload(request)).rejects.toMatchObject({ reason: "UPLOAD_IN_TRASH" });
      await new Promise((resolve) => setTimeout(resolve, 5));
      await store.put(keyOf("alice", "s1", "c.png"), bytes("later"));
      expect((await uploads.listUploads(alice, "s1")).map((upload) => upload.filename)).toEqual(["c.png"]);

      expect(await uploads.restoreExpiredUpload(alice, "s1", "a.png")).toBe(true);
      expect((await uploads.listUploads(alice, "s1")).map((upload) => upload.filename)).toEqual([
        "a.png",
        "c.png",
      ]);
      const swept: string[] = [];
      expect(
        await uploads.sweepTrashedUploads({
          graceMs: 60_000,
          onSwept: (gone, by) => {
            swept.push(...gone.map((upload) => `${upload.filename} by ${by}`));
          },
        }),
      ).toBe(0);
      expect(
        await uploads.sweepTrashedUploads({
          graceMs: 0,
          onSwept: (gone, by) => {
            swept.push(...gone.map((upload) => `${upload.filename} by ${by}`));
          },
        }),
      ).toBe(1);
      expect(swept).toEqual(["b.png by key:k1"]);
      expect(await store.head(keyOf("alice", "s1", "b.png"))).toBeNull();
      expect(await uploads.usage(alice, "s1")).toMatchObject({ usedBytes: 10, objects: 2 });
      expect(await uploads.listExpiredUploads(alice)).toEqual([]);
      expect((await uploads.listUploads(alice, "s1")).map((upload) => upload.filename)).toEqual([
        "a.png",
        "c.png",
      ]);
    },
  );

  it("a URL handed out before the deletion cannot overwrite an upload now in the trash; a new name it can", async () => {
    let service: ReturnType<typeof createUploadService> | undefined;
    const store = createFsObjectStore({
      root: await tempDirectory("stowage-trashed-overwrite-"),
      directUrls: {
        baseUrl: `${server.url}direct`,
        secret: "a test secret of at least 32 bytes!",
        checkUpload: (upload, options) => service!.checkDirectUpload(upload, options),
      },
    });
    handle = (request) => store.handleDirectRequest!(request);
    service = createUploadService({
      store,
      sessionExists: async (principal, id) => principal.id === "alice" && id === "s1",
    });
    await store.put(keyOf("alice", "s1", "a.png"), bytes("kept"));
    const request = { principal: alice, sessionId: "s1", contentType: "image/png", fileSize: 3 };
    const over = await service.requestUpload({ ...request, filename: "a.png" });
    const fresh = await service.requestUpload({ ...request, filename: "b.png" });
    await new Promise((resolve) => setTimeout(resolve, 5));
    await service.trashSessionUploads(alice, "s1", { by: "key:k1" });
    const put = (grant: { url: string; headers: Record<string, string> }) =>
      fetch(grant.url, { method: "PUT", headers: grant.headers, body: bytes("new") });
    const refused = await put(over);
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ reason: "UPLOAD_IN_TRASH" });
    expect(await store.get(keyOf("alice", "s1", "a.png"))).toEqual(bytes("kept"));
    expect((await put(fresh)).status).toBe(200);
  });

  it("ignores every key under upload-trash/ that is not a mark, and keeps each deletion's mark apart", async () => {
    const { store, uploads: retainedUploads, put } = await retained();
    // Keys the sweep can list but must never address (a store refuses `..`): listed among alice's.
    const unaddressable = [
      "upload-trash/user/alice/s1/../x.json",
      "upload-trash/user/alice/s1/../../../../sessions/user/alice/s1/artifacts/a.png",
      "upload-trash/../sessions/user/alice/s1/artifacts/b.png",
    ];
    const listing: ObjectStore = {
      ...store,
      iterate(options) {
        const inner = store.iterate(options);
        const prefix = options?.prefix ?? "";
        return (async function* () {
          for (const key of unaddressable.filter((each) => each.startsWith(prefix))) {
            yield { key, size: 1, lastModified: new Date(0) };
          }
          yield* inner;
        })();
      },
    };
    const uploads = createUploadService({
      store: listing,
      sessionExists: (principal, id) => id === "s1" && principal.id === "alice",
      retentionDays: 30,
    });
    await put(keyOf("alice", "s1", "a.png"), "first", 2);
    await put(keyOf("alice", "s1", "b.png"), "second!", 1);
    const name = "0000000000000001-0123456789abcdef-key:old.json";
    const hostile = [
      // One mark for the whole session, as it was before each deletion had its own.
      "upload-trash/user/alice/s1.json",
      `upload-trash/team/alice/s1/${name}`,
      `upload-trash/user/alice/s1/deeper/${name}`,
      `upload-trash/user/alice/s1/${name.replace(".json", ".txt")}`,
      // Names that would sort after any real mark, were they marks.
      "upload-trash/user/alice/s1/9999999999999999-0123456789abcdef-key:late.json",
      "upload-trash/user/alice/s1/8000000000000000-0123456789ABCDEF-key:late.json",
      "upload-trash/user/alice/s1/8000000000000000-0123456789abcdef-.late.json",
      "upload-trash/user/alice/s1/zzz.json",
    ];
    const body = bytes(JSON.stringify({ at: new Date().toISOString(), by: "key:hostile" }));
    for (const key of hostile) await store.put(key, body);
    const live = async () => (await uploads.listUploads(alice, "s1")).map((upload) => upload.filename);
    const marks = async () => {
      const keys: string[] = [];
      for await (const item of store.iterate({ prefix: "upload-trash/" })) keys.push(item.key);
      return keys.filter((key) => !hostile.includes(key));
    };

    // None of them is a mark: nothing is in the trash, and nothing is swept or touched.
    expect(await live()).toEqual(["a.png", "b.png"]);
    expect(await uploads.sweepTrashedUploads({ graceMs: 0 })).toBe(0);
    expect(await live()).toEqual(["a.png", "b.png"]);

    // Each deletion creates a mark of its own; the later one is in force, hidden by none of them.
    await retainedUploads.trashSessionUploads(alice, "s1", { by: "key:k1" });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const took = await uploads.trashSessionUploads(alice, "s1", { by: "key:k2" });
    expect(took).toMatchObject({ uploads: 2, bytes: 12 });
    expect(await marks()).toEqual([
      expect.stringMatching(/^upload-trash\/user\/alice\/s1\/\d{16}-[0-9a-f]{16}-key:k1\.json$/),
      expect.stringMatching(/^upload-trash\/user\/alice\/s1\/\d{16}-[0-9a-f]{16}-key:k2\.json$/),
    ]);
    expect(await live()).toEqual([]);
    const expired = await uploads.listExpiredUploads(alice, { sessionId: "s1" });
    expect(expired.map(({ filename, deletedBy, expiresAt }) => [filename, deletedBy, expiresAt])).toEqual([
      ["a.png", "key:k2", took.trashedAt],
      ["b.png", "key:k2", took.trashedAt],
    ]);

    // Swept once: the uploads and both marks go; every other key stays as it was.
    const swept: string[] = [];
    const count = await uploads.sweepTrashedUploads({
      graceMs: 0,
      onSwept: (gone, by) => {
        swept.push(...gone.map((upload) => `${upload.filename} by ${by}`));
      },
    });
    expect([count, swept]).toEqual([2, ["a.png by key:k2", "b.png by key:k2"]]);
    expect(await marks()).toEqual([]);
    for (const key of hostile) expect(await store.get(key)).toEqual(body);
  });

  it("reads a mark from its name alone: a damaged body neither breaks a read nor changes it", async () => {
    const { store, uploads, put } = await retained();
    await put(keyOf("alice", "s1", "a.png"), "first", 1);
    const at = new Date(Date.now() - 1000);
    const name = `${String(at.getTime()).padStart(16, "0")}-0123456789abcdef-key:k1.json`;
    await store.put(`upload-trash/user/alice/s1/${name}`, bytes("{ damaged"));
    expect(await uploads.listUploads(alice, "s1")).toEqual([]);
    expect(
      (await uploads.listExpiredUploads(alice)).map(({ filename, deletedBy, expiresAt }) => [
        filename,
        deletedBy,
        expiresAt,
      ]),
    ).toEqual([["a.png", "key:k1", at]]);
  });

  it("deleting the session's uploads deletes every mark of the session, and only its", async () => {
    const { store, uploads, put } = await retained();
    await put(keyOf("alice", "s1", "a.png"), "first", 1);
    await put(keyOf("alice", "s2", "b.png"), "second", 1);
    await uploads.trashSessionUploads(alice, "s1", { by: "key:k1" });
    await uploads.trashSessionUploads(alice, "s1", { by: "key:k2" });
    await uploads.trashSessionUploads(alice, "s2", { by: "key:k1" });
    await uploads.deleteSessionUploads(alice, "s1");
    const keys: string[] = [];
    for await (const item of store.iterate({ prefix: "upload-trash/" })) keys.push(item.key);
    expect(keys).toEqual([
      expect.stringMatching(/^upload-trash\/user\/alice\/s2\/\d{16}-[0-9a-f]{16}-key:k1\.json$/),
    ]);
    expect(await store.head(keyOf("alice", "s1", "a.png"))).toBeNull();
    expect((await uploads.listExpiredUploads(alice)).map((upload) => upload.filename)).toEqual(["b.png"]);
  });

  it("refuses an unknown session and a bad by, marking nothing", async () => {
    const { uploads, put } = await retained();
    await put(keyOf("alice", "s1", "a.png"), "first", 1);
    await expect(uploads.trashSessionUploads(alice, "nope")).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(uploads.trashSessionUploads(bob, "s3")).rejects.toMatchObject({ code: "NOT_FOUND" });
    for (const by of ["", "x".repeat(129), 7 as never]) {
      await expect(uploads.trashSessionUploads(alice, "s1", { by })).rejects.toMatchObject({
        code: "INVALID_INPUT",
      });
    }
    expect((await uploads.listUploads(alice, "s1")).map((upload) => upload.filename)).toEqual(["a.png"]);
  });
});
