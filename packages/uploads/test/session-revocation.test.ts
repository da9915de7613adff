import type { Principal } from "@stowage/core";
// Deleting a session's uploads revokes every upload URL handed out for it before: on the file
// system the app's signed URLs are refused at the PUT; on a store whose PUTs go straight to the
// server (S3: RGW, which does not check the signed SHA-256, and AWS, which does) the upload lands
// and is refused at completion or at the first listing, and deleted. The session registered again
// starts empty, and the quota those URLs reserved is free at once. `artifacts` in keys is the
// design document's wire name.
import { sha256Hex } from "@stowage/core";
import { expectStowageError, recordingLogger } from "@stowage/core/testing";
import { createFsObjectStore } from "@stowage/storage-fs";
import { tempDirectory } from "@stowage/test-support";
import { beforeEach, describe, expect, it } from "vitest";
import {
  createMemoryQuotaLedger,
  createUploadPolicy,
  createUploadService,
  type QuotaLedger,
  type UploadGrant,
  type UploadService,
} from "../src/index.js";
import { uncheckedStore } from "./support/unchecked-store.js";
import { type FetchHandler, startFetchServer } from "./support/upload-server.js";

const alice: Principal = { kind: "user", id: "alice" };
const prefix = "sessions/user/alice/s1/";
const sessions = new Set<string>();
const text = (value: string) => new TextEncoder().encode(value);
const MINUTE = 60_000;

let uploads: UploadService;
let handle: FetchHandler = () => Promise.reject(new Error("nothing mounted yet"));
const server = await startFetchServer((request) => handle(request));
const secret = "a test secret of at least 32 bytes!";
/** The app's file-system store: its PUTs and GETs are checked by the upload service first. */
const checkedFs = createFsObjectStore({
  root: await tempDirectory("stowage-revocation-checked-"),
  directUrls: {
    baseUrl: `${server.url}checked`,
    secret,
    checkUpload: (upload, options) => uploads.checkDirectUpload(upload, options),
    checkDownload: (download, options) => uploads.checkDirectDownload(download, options),
  },
});
/** A store whose PUTs nobody but the store checks (as S3's go to the S3 server). */
const plainFs = createFsObjectStore({
  root: await tempDirectory("stowage-revocation-plain-"),
  directUrls: { baseUrl: `${server.url}plain`, secret },
});
handle = (request) =>
  new URL(request.url).pathname.startsWith("/checked/")
    ? checkedFs.handleDirectRequest(request)
    : plainFs.handleDirectRequest(request);

async function storedKeys(store: typeof plainFs, under = ""): Promise<string[]> {
  const keys: string[] = [];
  for await (const item of store.iterate({ prefix: under })) keys.push(item.key);
  return keys;
}

async function put(grant: UploadGrant, body: Uint8Array) {
  const response = await fetch(grant.url, { method: "PUT", headers: grant.headers, body });
  return { status: response.status, body: (await response.json().catch(() => null)) as { reason?: string } };
}

function serviceOn(
  store: Parameters<typeof createUploadService>[0]["store"],
  now: () => number,
  quota?: QuotaLedger,
) {
  return createUploadService({
    store,
    ...(quota ? { quota } : {}),
    // 100 bytes a session: one revoked URL that still counted would leave no room for the next.
    policy: createUploadPolicy({ maxFileSizeBytes: 100, maxTotalSizeBytes: 100 }),
    sessionExists: (principal, id) => sessions.has(`${principal.kind}:${principal.id}/${id}`),
    now,
    logger: recordingLogger([]).logger,
  });
}

const grantFor = (filename: string, body: Uint8Array) =>
  uploads.requestUpload({
    principal: alice,
    sessionId: "s1",
    filename,
    contentType: "text/plain",
    fileSize: body.byteLength,
    sha256: sha256Hex(body),
  });

/** Deletes the session's uploads and the session, then registers the id again. */
async function deleteAndRegisterAgain() {
  sessions.delete("user:alice/s1");
  await uploads.deleteSessionUploads(alice, "s1");
  sessions.add("user:alice/s1");
}

describe("deleting a session's uploads, on the app's file-system store (checked at the PUT)", () => {
  beforeEach(async () => {
    for (const key of await storedKeys(checkedFs)) await checkedFs.delete(key);
    sessions.clear();
    sessions.add("user:alice/s1");
    uploads = serviceOn(checkedFs, Date.now);
  });

  it("a URL handed out before the deletion is refused at the PUT (403 UPLOAD_REVOKED) and stores nothing", async () => {
    const body = text("written after the delete");
    const grant = await grantFor("late.txt", body);
    sessions.delete("user:alice/s1");
    await uploads.deleteSessionUploads(alice, "s1");
    const refused = await put(grant, body);
    expect(refused.status).toBe(403);
    expect(refused.body.reason).toBe("UPLOAD_REVOKED");
    expect(await storedKeys(checkedFs, prefix)).toEqual([]);
  });

  it("a session its owner no longer has (in a trash) takes no PUT through its URLs; given back, it takes them again", async () => {
    const body = text("written while the session is in the trash");
    const grant = await grantFor("trashed.txt", body);
    sessions.delete("user:alice/s1"); // what a trash does: the session is hidden, its grants kept
    const refused = await put(grant, body);
    expect(refused.status).toBe(403);
    expect(refused.body.reason).toBe("UPLOAD_REVOKED");
    // Only the grant's record, kept for a restore: no bytes.
    const stored = await storedKeys(checkedFs, prefix);
    expect(stored.filter((key) => !key.includes("/upload-records/"))).toEqual([]);
    sessions.add("user:alice/s1"); // restored
    expect((await put(grant, body)).status).toBe(200);
    expect((await uploads.listUploads(alice, "s1")).map(({ filename }) => filename)).toEqual(["trashed.txt"]);
  });

  it("a download URL signed before its session went to the trash serves nothing meanwhile (404); given back, it serves", async () => {
    const body = text("notes read after the delete");
    const grant = await grantFor("notes.txt", body);
    expect((await put(grant, body)).status).toBe(200);
    const download = await uploads.requestDownload(alice, "s1", "notes.txt");
    sessions.delete("user:alice/s1");
    const refused = await fetch(download.url);
    expect(refused.status).toBe(404);
    expect(await refused.json()).toMatchObject({ code: "NOT_FOUND", reason: "SESSION_NOT_FOUND" });
    expect((await fetch(download.url, { method: "HEAD" })).status).toBe(404);
    sessions.add("user:alice/s1");
    const served = await fetch(download.url);
    expect(await served.text()).toBe("notes read after the delete");
  });

  it("checkDirectDownload lets a key that is no session's through, and refuses another principal's unknown session", async () => {
    await uploads.checkDirectDownload({ key: "elsewhere/report.txt" });
    await expectStowageError(
      uploads.checkDirectDownload({ key: "sessions/user/mallory/s1/artifacts/notes.txt" }),
      "NOT_FOUND",
      "SESSION_NOT_FOUND",
    );
    await uploads.checkDirectDownload({ key: "sessions/user/alice/s1/artifacts/notes.txt" });
  });

  it("the id registered again starts empty: an old URL cannot write into it, a new one can", async () => {
    const before = text("the deleted session's notes");
    const after = text("the new session's notes");
    const old = await grantFor("notes.txt", before);
    await deleteAndRegisterAgain();
    const fresh = await grantFor("notes.txt", after);
    expect((await put(old, before)).status).toBe(403);
    expect(await uploads.listUploads(alice, "s1")).toEqual([]);
    expect((await put(fresh, after)).status).toBe(200);
    expect((await uploads.listUploads(alice, "s1")).map(({ filename }) => filename)).toEqual(["notes.txt"]);
  });

  it("the quota the revoked URLs reserved is free at once, not when they expire", async () => {
    await grantFor("a.txt", new Uint8Array(60));
    await grantFor("b.txt", new Uint8Array(40));
    await expectStowageError(grantFor("c.txt", new Uint8Array(1)), "QUOTA_EXCEEDED");
    await deleteAndRegisterAgain();
    expect(await uploads.usage(alice, "s1")).toMatchObject({ totalBytes: 0, pendingUploads: 0 });
    await grantFor("c.txt", new Uint8Array(100));
  });

  it("a URL asked for while the session's uploads are deleted is refused, not handed out, and reserves nothing", async () => {
    let deleting: Promise<unknown> | undefined;
    const racing: typeof checkedFs = {
      ...checkedFs,
      async createUploadUrl(request, options) {
        // The deletion runs to its end between this request's reservation and its answer.
        deleting ??= uploads.deleteSessionUploads(alice, "s1");
        await deleting;
        return checkedFs.createUploadUrl(request, options);
      },
    };
    uploads = serviceOn(racing, Date.now);
    await expectStowageError(grantFor("raced.txt", text("raced")), "CONFLICT", "UPLOADS_REVOKED");
    expect(await storedKeys(checkedFs, prefix)).toEqual([]);
    expect(await uploads.usage(alice, "s1")).toMatchObject({ totalBytes: 0, pendingUploads: 0 });
  });
});

describe("a completion or a listing that a deletion of the session's uploads overtakes", () => {
  beforeEach(async () => {
    for (const key of await storedKeys(checkedFs)) await checkedFs.delete(key);
    sessions.clear();
    sessions.add("user:alice/s1");
    // The ledger, with the whole deletion run between a verification and its commit.
    const ledger = createMemoryQuotaLedger();
    let deleting: Promise<unknown> | undefined;
    const racing: QuotaLedger = {
      ...ledger,
      async commit(commit, options) {
        deleting ??= uploads.deleteSessionUploads(alice, "s1");
        await deleting;
        return ledger.commit(commit, options);
      },
    };
    uploads = serviceOn(checkedFs, Date.now, racing);
  });

  it("a completion counts nothing: 403 UPLOAD_REVOKED, and the quota stays at zero", async () => {
    const body = text("verified while deleted");
    await put(await grantFor("raced.txt", body), body);
    await expectStowageError(uploads.completeUpload(alice, "s1", "raced.txt"), "FORBIDDEN", "UPLOAD_REVOKED");
    expect(await storedKeys(checkedFs, prefix)).toEqual([]);
    expect(await uploads.usage(alice, "s1")).toMatchObject({ usedBytes: 0, objects: 0, totalBytes: 0 });
  });

  it("a listing answers 409 UPLOADS_REVOKED (list again) and leaves the quota at zero", async () => {
    const body = text("listed while deleted");
    await put(await grantFor("raced.txt", body), body);
    await expectStowageError(uploads.listUploads(alice, "s1"), "CONFLICT", "UPLOADS_REVOKED");
    expect(await uploads.listUploads(alice, "s1")).toEqual([]);
    expect(await uploads.usage(alice, "s1")).toMatchObject({ usedBytes: 0, objects: 0, totalBytes: 0 });
  });
});

// RGW: the S3 server takes any bytes of the signed size and type; AWS S3 checks the SHA-256.
describe.each([
  { name: "RGW", store: () => uncheckedStore(plainFs) },
  { name: "AWS S3", store: () => plainFs },
])("deleting a session's uploads, where PUTs go straight to the server ($name)", ({ store }) => {
  let clock: number;

  beforeEach(async () => {
    for (const key of await storedKeys(plainFs)) await plainFs.delete(key);
    sessions.clear();
    sessions.add("user:alice/s1");
    clock = Date.now();
    uploads = serviceOn(store(), () => clock);
  });

  it("an upload through a revoked URL lands, but its completion is refused (403 UPLOAD_REVOKED) and it is deleted", async () => {
    const body = text("landed after the delete");
    const grant = await grantFor("late.txt", body);
    await deleteAndRegisterAgain();
    expect((await put(grant, body)).status).toBe(200);
    await expectStowageError(uploads.completeUpload(alice, "s1", "late.txt"), "FORBIDDEN", "UPLOAD_REVOKED");
    expect(await storedKeys(plainFs, prefix)).toEqual([]);
    expect(await uploads.listUploads(alice, "s1")).toEqual([]);
  });

  it("one nobody completed is refused at the first listing and deleted; the usage never counts it", async () => {
    const body = text("never completed");
    const grant = await grantFor("late.txt", body);
    await deleteAndRegisterAgain();
    await put(grant, body);
    expect(await uploads.listUploads(alice, "s1")).toEqual([]);
    expect(await storedKeys(plainFs, `${prefix}artifacts/`)).toEqual([]);
    expect(await uploads.usage(alice, "s1")).toMatchObject({ totalBytes: 0, objects: 0 });
  });

  it("completing an upload of a deleted session (not registered again) deletes it: 403 UPLOAD_REVOKED", async () => {
    const body = text("into a deleted session");
    const grant = await grantFor("late.txt", body);
    sessions.delete("user:alice/s1");
    await uploads.deleteSessionUploads(alice, "s1");
    await put(grant, body);
    await expectStowageError(uploads.completeUpload(alice, "s1", "late.txt"), "FORBIDDEN", "UPLOAD_REVOKED");
    expect(await storedKeys(plainFs, prefix)).toEqual([]);
    // A session that never had its uploads deleted is simply not there.
    await expectStowageError(
      uploads.completeUpload(alice, "s9", "late.txt"),
      "NOT_FOUND",
      "SESSION_NOT_FOUND",
    );
  });

  it("one landed in a session deleted for good, never completed nor listed, is deleted by the sweep; its note goes once the URL expired", async () => {
    const body = text("written after the delete, then left");
    const grant = await grantFor("left.txt", body);
    sessions.delete("user:alice/s1");
    await uploads.deleteSessionUploads(alice, "s1");
    expect((await put(grant, body)).status).toBe(200);
    expect(await storedKeys(plainFs, prefix)).toEqual([`${prefix}artifacts/left.txt`]);
    // Whose it was, for the deletion audit.
    expect(await uploads.sweepRevokedUploads()).toEqual({
      removed: 1,
      uploads: [{ principal: alice, sessionId: "s1", filename: "left.txt" }],
    });
    expect(await storedKeys(plainFs, prefix)).toEqual([]);
    // The URL can still write until it expires: the note stays, and a second landing goes too.
    expect((await put(grant, body)).status).toBe(200);
    expect(await uploads.sweepRevokedUploads()).toMatchObject({ removed: 1 });
    expect(await storedKeys(plainFs, "revoked-uploads/")).toHaveLength(1);
    clock += 30 * MINUTE;
    expect(await uploads.sweepRevokedUploads()).toMatchObject({ removed: 0 });
    expect(await storedKeys(plainFs)).toEqual([]);
  });

  it("the sweep leaves the uploads of the id registered again: a new URL's upload counts", async () => {
    const old = await grantFor("notes.txt", text("old"));
    await deleteAndRegisterAgain();
    const body = text("the new session's notes");
    await put(await grantFor("notes.txt", body), body);
    await put(old, text("old"));
    expect(await uploads.sweepRevokedUploads()).toMatchObject({ removed: 1 });
    const fresh = text("again, the new session's");
    await put(await grantFor("notes.txt", fresh), fresh);
    expect(await uploads.sweepRevokedUploads()).toMatchObject({ removed: 0 });
    expect(await uploads.listUploads(alice, "s1")).toEqual([
      expect.objectContaining({ filename: "notes.txt", size: fresh.byteLength }),
    ]);
  });

  it("an upload of the id registered again counts, also once its URLs have expired and its records are gone", async () => {
    await deleteAndRegisterAgain();
    const body = text("the new session's");
    await put(await grantFor("new.txt", body), body);
    expect((await uploads.completeUpload(alice, "s1", "new.txt")).size).toBe(body.byteLength);
    // Every URL expired, the landing grace too: the records go, the upload stays.
    clock += 30 * MINUTE;
    expect((await uploads.listUploads(alice, "s1")).map(({ filename }) => filename)).toEqual(["new.txt"]);
    expect((await uploads.listUploads(alice, "s1")).map(({ filename }) => filename)).toEqual(["new.txt"]);
    expect((await uploads.completeUpload(alice, "s1", "new.txt")).size).toBe(body.byteLength);
    expect(await uploads.usage(alice, "s1")).toMatchObject({ usedBytes: body.byteLength, objects: 1 });
  });
});
