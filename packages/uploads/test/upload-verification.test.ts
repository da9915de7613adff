// Verification of uploads on a store that does not check the bound SHA-256 itself (as Ceph RGW 16
// does not): the file-system store made to sign URLs without it. The RGW integration test proves
// the same against the real server. `artifacts` in keys is the design document's wire name.
import { utimes } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Principal } from "@stowage/core";
import { sha256Hex } from "@stowage/core";
import { expectStowageError, type RecordedWarning, recordingLogger } from "@stowage/core/testing";
import { createFsObjectStore } from "@stowage/storage-fs";
import { tempDirectory } from "@stowage/test-support";
import { beforeEach, describe, expect, it } from "vitest";
import { createUploadService, type UploadGrant, type UploadService } from "../src/index.js";
import { uncheckedStore } from "./support/unchecked-store.js";
import { type FetchHandler, startFetchServer } from "./support/upload-server.js";

const KIB = 1024;
const MINUTE = 60_000;
const alice: Principal = { kind: "user", id: "alice" };
const bob: Principal = { kind: "user", id: "bob" };
const sessions = new Set(["user:alice/s1", "user:alice/s2", "user:bob/s1"]);

let handle: FetchHandler = () => Promise.reject(new Error("nothing mounted yet"));
const server = await startFetchServer((request) => handle(request));
const fsStore = createFsObjectStore({
  root: await tempDirectory("stowage-upload-verification-"),
  directUrls: { baseUrl: `${server.url}direct`, secret: "a test secret of at least 32 bytes!" },
});
handle = (request) => fsStore.handleDirectRequest!(request);

/** Every key in the store, in order. */
async function storedKeys(prefix = ""): Promise<string[]> {
  const keys: string[] = [];
  for await (const item of fsStore.iterate({ prefix })) keys.push(item.key);
  return keys;
}

async function put(grant: UploadGrant, body: Uint8Array): Promise<void> {
  const response = await fetch(grant.url, { method: "PUT", headers: grant.headers, body });
  expect(response.status).toBe(200);
}

const text = (value: string) => new TextEncoder().encode(value);

describe("uploads on a store that does not check the bound SHA-256", () => {
  let store: ReturnType<typeof uncheckedStore>;
  let uploads: UploadService;
  let clock: number;
  const warnings: RecordedWarning[] = [];

  beforeEach(async () => {
    for (const key of await storedKeys()) await fsStore.delete(key);
    store = uncheckedStore(fsStore);
    clock = Date.now();
    warnings.length = 0;
    uploads = createUploadService({
      store,
      sessionExists: (principal, id) => sessions.has(`${principal.kind}:${principal.id}/${id}`),
      now: () => clock,
      logger: recordingLogger(warnings).logger,
    });
  });

  /** A URL for `body`, binding its SHA-256 unless `bindSha256` is false. */
  const grantFor = (filename: string, body: Uint8Array, bindSha256 = true) =>
    uploads.requestUpload({
      principal: alice,
      sessionId: "s1",
      filename,
      contentType: filename.endsWith(".png") ? "image/png" : "text/plain",
      fileSize: body.byteLength,
      ...(bindSha256 ? { sha256: sha256Hex(body) } : {}),
    });

  it("keeps a record of what each URL bound, beside the uploads folder", async () => {
    await grantFor("shot.png", text("honest bytes"));
    const records = await storedKeys("sessions/user/alice/s1/");
    expect(records).toEqual([
      expect.stringMatching(/^sessions\/user\/alice\/s1\/upload-records\/shot\.png\/\d+-[0-9a-f]{16}\.json$/),
    ]);
    expect(JSON.parse(new TextDecoder().decode((await fsStore.get(records[0]!))!))).toEqual({
      size: 12,
      sha256: sha256Hex(text("honest bytes")),
      contentType: "image/png",
      expiresAt: expect.any(Number),
    });
    // Records are bookkeeping: the session's usage is the reservation alone.
    expect(await uploads.usage(alice, "s1")).toMatchObject({
      usedBytes: 0,
      pendingBytes: 12,
      totalBytes: 12,
    });
  });

  it("refuses a same-length upload of other bytes at completion, deletes it, and never serves it", async () => {
    const honest = text("the real screenshot");
    const forged = text("a forged screenshot");
    expect(forged.byteLength).toBe(honest.byteLength);
    await put(await grantFor("shot.png", honest), forged);
    await expectStowageError(uploads.completeUpload(alice, "s1", "shot.png"), "INTEGRITY", "UPLOAD_MISMATCH");
    expect(await fsStore.head("sessions/user/alice/s1/artifacts/shot.png")).toBeNull();
    await expectStowageError(
      uploads.requestDownload(alice, "s1", "shot.png"),
      "NOT_FOUND",
      "UPLOAD_NOT_FOUND",
    );
    expect(await uploads.listUploads(alice, "s1")).toEqual([]);
    expect(await uploads.usage(alice, "s1")).toMatchObject({ usedBytes: 0, objects: 0 });
    expect(warnings).toHaveLength(1);
  });

  it("a listing verifies what nobody completed: the honest upload is shown and counted, the forged one deleted", async () => {
    await put(await grantFor("good.png", text("good")), text("good"));
    await put(await grantFor("bad.png", text("good")), text("evil"));
    const listed = await uploads.listUploads(alice, "s1");
    expect(listed.map(({ filename, size }) => [filename, size])).toEqual([["good.png", 4]]);
    expect(await fsStore.head("sessions/user/alice/s1/artifacts/bad.png")).toBeNull();
    expect(await uploads.usage(alice, "s1")).toMatchObject({ usedBytes: 4, objects: 1 });
  });

  it("a download URL is refused for a forged upload nobody completed", async () => {
    await put(await grantFor("bad.png", text("good")), text("evil"));
    await expectStowageError(uploads.requestDownload(alice, "s1", "bad.png"), "INTEGRITY", "UPLOAD_MISMATCH");
    await expectStowageError(uploads.requestDownload(alice, "s1", "bad.png"), "NOT_FOUND");
  });

  it("a completed upload counts at once; its URL reused for other bytes is refused on the next listing", async () => {
    const honest = text("version one");
    const grant = await grantFor("notes.txt", honest);
    await put(grant, honest);
    expect(await uploads.completeUpload(alice, "s1", "notes.txt")).toMatchObject({
      filename: "notes.txt",
      size: 11,
    });
    expect(await uploads.usage(alice, "s1")).toMatchObject({
      usedBytes: 11,
      pendingBytes: 0,
      pendingUploads: 0,
    });
    // The URL is still valid: someone holding it writes other bytes of the signed length.
    await new Promise((resolve) => setTimeout(resolve, 20));
    await put(grant, text("version two"));
    expect(await uploads.listUploads(alice, "s1")).toEqual([]);
    expect(await uploads.usage(alice, "s1")).toMatchObject({ usedBytes: 0 });
  });

  it("a download URL signed while an upload URL can still write serves the verified bytes, whatever that URL writes later", async () => {
    const honest = text("the real report");
    const grant = await grantFor("report.txt", honest);
    await put(grant, honest);
    await uploads.completeUpload(alice, "s1", "report.txt");
    const download = await uploads.requestDownload(alice, "s1", "report.txt");
    // The upload URL is still valid: its holder writes other bytes of the signed length.
    await put(grant, text("a forged report"));
    const served = await fetch(download.url);
    expect(new TextDecoder().decode(await served.arrayBuffer())).toBe("the real report");
    // The copy was made once for this verified object; a second download reuses it.
    expect(await storedKeys("sessions/user/alice/s1/upload-records/report.txt/")).toContainEqual(
      expect.stringMatching(/\/served-\d+-15$/),
    );
  });

  it("once no URL can write the upload, downloads are of the upload itself and the copies go", async () => {
    const body = text("kept");
    await put(await grantFor("kept.txt", body), body);
    const early = await uploads.requestDownload(alice, "s1", "kept.txt");
    expect(early.url).toContain("/upload-records/");
    clock += 15 * MINUTE + 10 * MINUTE + 1000;
    const late = await uploads.requestDownload(alice, "s1", "kept.txt");
    expect(late.url).toContain("/artifacts/kept.txt");
    expect(new TextDecoder().decode(await (await fetch(late.url)).arrayBuffer())).toBe("kept");
    expect(await storedKeys("sessions/user/alice/s1/upload-records/")).toEqual([]);
  });

  it("without a bound SHA-256 any bytes of the signed size pass, even beside an older URL that bound one", async () => {
    await grantFor("log.txt", text("aaaa"));
    await put(await grantFor("log.txt", text("bbbb"), false), text("cccc"));
    expect(await uploads.completeUpload(alice, "s1", "log.txt")).toMatchObject({ size: 4 });
  });

  it("hashes an upload once: a stamp spares later listings while its URLs can still write", async () => {
    const body = new Uint8Array(64 * KIB).fill(7);
    await put(await grantFor("big.png", body), body);
    // The stamp is written only once the object's second is safely past.
    clock += 5000;
    await uploads.listUploads(alice, "s1");
    expect(store.streams).toBe(1);
    expect(await storedKeys("sessions/user/alice/s1/upload-records/big.png/")).toContain(
      "sessions/user/alice/s1/upload-records/big.png/verified.json",
    );
    await uploads.listUploads(alice, "s1");
    await uploads.completeUpload(alice, "s1", "big.png");
    expect(store.streams).toBe(1);
  });

  it("once every URL has expired (plus the landing grace) the records go and the upload is final", async () => {
    await put(await grantFor("final.txt", text("final")), text("final"));
    await grantFor("never.txt", text("never"));
    clock += 15 * MINUTE + 10 * MINUTE - 1000;
    await uploads.listUploads(alice, "s1");
    // Both URLs' records, and the stamp of the verified upload.
    expect(await storedKeys("sessions/user/alice/s1/upload-records/")).toHaveLength(3);
    clock += 2000;
    const listed = await uploads.listUploads(alice, "s1");
    expect(listed.map((upload) => upload.filename)).toEqual(["final.txt"]);
    expect(await storedKeys("sessions/user/alice/s1/upload-records/")).toEqual([]);
    expect(await uploads.usage(alice, "s1")).toMatchObject({ usedBytes: 5, pendingBytes: 0 });
  });

  it("completing nothing is NOT_FOUND, and leaves the URL's record for an upload still to come", async () => {
    await grantFor("later.png", text("later"));
    await expectStowageError(
      uploads.completeUpload(alice, "s1", "later.png"),
      "NOT_FOUND",
      "UPLOAD_NOT_FOUND",
    );
    expect(await storedKeys("sessions/user/alice/s1/upload-records/")).toHaveLength(1);
  });

  it("a record that cannot be read vouches for nothing", async () => {
    const grant = await grantFor("odd.png", text("odd"));
    const [record] = await storedKeys("sessions/user/alice/s1/upload-records/");
    await fsStore.put(record!, text("{not json"));
    await put(grant, text("odd"));
    await expectStowageError(uploads.completeUpload(alice, "s1", "odd.png"), "INTEGRITY", "UPLOAD_MISMATCH");
  });

  it("deleting a session removes everything under its prefix, and only there; usage follows", async () => {
    await put(await grantFor("a.png", text("aaaa")), text("aaaa"));
    await uploads.completeUpload(alice, "s1", "a.png");
    await fsStore.put("sessions/user/alice/s1/session.json", text("{}"));
    await fsStore.put("sessions/user/alice/s2/artifacts/keep.png", text("keep"));
    await fsStore.put("sessions/user/bob/s1/artifacts/bobs.png", text("bob"));
    expect(await storedKeys("sessions/user/alice/s1/upload-records/")).toHaveLength(1);
    const deleted = await uploads.deleteSessionUploads(alice, "s1");
    // The upload and session.json; its URL's record goes too, as bookkeeping not counted.
    expect(deleted).toEqual({ deletedObjects: 2, deletedBytes: 4 + 2 });
    expect(await storedKeys("sessions/user/alice/s1/")).toEqual([]);
    expect(await storedKeys()).toEqual([
      // The note of the URL that can still write, for the sweep (see session-revocation.test.ts).
      expect.stringMatching(/^revoked-uploads\/user\/alice\/s1\/\d+-[0-9a-f]{16}\.json$/),
      "sessions/user/alice/s2/artifacts/keep.png",
      "sessions/user/bob/s1/artifacts/bobs.png",
    ]);
    expect(await uploads.usage(alice, "s1")).toMatchObject({ usedBytes: 0, objects: 0 });
    expect(await uploads.deleteSessionUploads(alice, "s1")).toEqual({ deletedObjects: 0, deletedBytes: 0 });
  });

  it("the retention sweep deletes uploads older than N days across sessions, with a dry run first", async () => {
    const day = 24 * 60 * MINUTE;
    const now = new Date(Date.now());
    const old = new Date(now.getTime() - 40 * day);
    const place = async (key: string, body: Uint8Array, modified: Date) => {
      await fsStore.put(key, body);
      const path = fileURLToPath(fsStore.uriFor(key));
      await utimes(path, modified, modified);
    };
    await place("sessions/user/alice/s1/artifacts/old.png", text("old!"), old);
    await place("sessions/user/alice/s1/artifacts/new.png", text("new"), now);
    await place("sessions/user/alice/s1/session.json", text("{}"), old);
    await place("sessions/user/bob/s1/artifacts/ancient.log", text("ancient"), old);
    await place("sessions/org/acme/x/artifacts/nested/deep.png", text("deep"), old);
    await uploads.usage(alice, "s1");

    const dry = await uploads.sweepUploads({ olderThanDays: 30, dryRun: true, now });
    const expected = [
      {
        principal: alice,
        sessionId: "s1",
        filename: "old.png",
        key: "sessions/user/alice/s1/artifacts/old.png",
        size: 4,
        lastModified: old,
      },
      {
        principal: bob,
        sessionId: "s1",
        filename: "ancient.log",
        key: "sessions/user/bob/s1/artifacts/ancient.log",
        size: 7,
        lastModified: old,
      },
    ];
    expect(dry).toEqual({
      dryRun: true,
      cutoff: new Date(now.getTime() - 30 * day),
      uploads: expected,
      deletedBytes: 11,
      deletedRecords: 0,
    });
    expect(await storedKeys()).toHaveLength(5);

    const swept = await uploads.sweepUploads({ olderThanDays: 30, now });
    expect(swept).toMatchObject({ dryRun: false, uploads: expected, deletedBytes: 11 });
    expect(await storedKeys()).toEqual([
      "sessions/org/acme/x/artifacts/nested/deep.png",
      "sessions/user/alice/s1/artifacts/new.png",
      "sessions/user/alice/s1/session.json",
    ]);
    expect(await uploads.usage(alice, "s1")).toMatchObject({ usedBytes: 5, objects: 2 });
  });

  it("the sweep removes the records of expired URLs whose upload never came, once they are old", async () => {
    await grantFor("ghost.png", text("ghost"));
    const [record] = await storedKeys("sessions/user/alice/s1/upload-records/");
    const later = new Date(Date.now() + 3 * 24 * 60 * MINUTE);
    expect(await uploads.sweepUploads({ olderThanDays: 1, now: new Date() })).toMatchObject({
      deletedRecords: 0,
    });
    expect(await uploads.sweepUploads({ olderThanDays: 1, now: later })).toMatchObject({
      uploads: [],
      deletedRecords: 1,
    });
    expect(await fsStore.head(record!)).toBeNull();
  });
});

describe("uploads on a store that checks the bound SHA-256 itself", () => {
  it("an upload completed while a listing runs stays counted after the listing", async () => {
    for (const key of await storedKeys()) await fsStore.delete(key);
    const clock = Date.now();
    let whileListing: () => Promise<void> = async () => {};
    // The file-system store, with a hook after the listing's last object.
    const store: typeof fsStore = {
      ...fsStore,
      async *iterate(options) {
        yield* fsStore.iterate(options);
        await whileListing();
      },
    };
    const uploads = createUploadService({
      store,
      sessionExists: () => true,
      now: () => clock,
    });
    const grantFor = (filename: string, body: Uint8Array) =>
      uploads.requestUpload({
        principal: alice,
        sessionId: "s1",
        filename,
        contentType: "image/png",
        fileSize: body.byteLength,
        sha256: sha256Hex(body),
      });
    await put(await grantFor("a.png", text("aaaa")), text("aaaa"));
    await uploads.completeUpload(alice, "s1", "a.png");
    // 0.png is granted, lands and is completed by other requests after the listing passed its
    // place (and its URL's record's).
    whileListing = async () => {
      whileListing = async () => {};
      await put(await grantFor("0.png", text("zero!")), text("zero!"));
      await uploads.completeUpload(alice, "s1", "0.png");
    };
    expect((await uploads.listUploads(alice, "s1")).map(({ filename }) => filename)).toEqual(["a.png"]);
    expect(await uploads.usage(alice, "s1")).toMatchObject({ usedBytes: 9, objects: 2, pendingUploads: 0 });
  });
});
