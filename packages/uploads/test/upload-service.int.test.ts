// `artifacts` in paths and keys below is the design document's wire name (the API paths and the
// S3 layout `sessions/<user|org>/<id>/<sessionId>/artifacts/<file>`).
import { randomBytes, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Principal } from "@stowage/core";
import { StowageError, sha256Hex } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { afterAll, describe, expect, it } from "vitest";
import { createUploadPolicy } from "../src/upload-policy.js";
import { createUploadService, type UploadServiceOptions } from "../src/upload-service.js";
import type { UploadGrant } from "../src/upload-service-types.js";
import { HOSTILE_FILENAMES } from "./support/filenames.js";
import { emptyStore, rgwSkipReason, rgwStore } from "./support/rgw.js";

const KIB = 1024;
const store = rgwStore("upload-service");
const alice: Principal = { kind: "user", id: "alice" };
const bob: Principal = { kind: "user", id: "bob" };
const acme: Principal = { kind: "org", id: "acme" };
const sessions = new Set<string>();

/** A new session in `owner`'s namespace. */
function newSession(owner: Principal): string {
  const id = `s-${randomUUID()}`;
  sessions.add(`${owner.kind}:${owner.id}/${id}`);
  return id;
}

function uploadsWith(options: Partial<UploadServiceOptions> = {}) {
  return createUploadService({
    store,
    sessionExists: (principal, id) => sessions.has(`${principal.kind}:${principal.id}/${id}`),
    ...options,
  });
}

/** Bytes under a session's prefix, without the service's own records of its URLs. */
async function storedBytes(owner: Principal, sessionId: string): Promise<number> {
  let total = 0;
  for await (const item of store.iterate({ prefix: `sessions/${owner.kind}/${owner.id}/${sessionId}/` })) {
    if (!item.key.includes("/upload-records/")) total += item.size;
  }
  return total;
}

function put(url: string, body: Uint8Array, headers: Record<string, string>) {
  return fetch(url, { method: "PUT", body, headers }).then(async (response) => ({
    status: response.status,
    text: await response.text(),
  }));
}

async function upload(grant: UploadGrant, body: Uint8Array): Promise<void> {
  const response = await put(grant.url, body, grant.headers);
  expect(response).toEqual({ status: 200, text: "" });
}

describe.skipIf(rgwSkipReason !== undefined)("uploads on Ceph RGW", () => {
  const uploads = uploadsWith();

  afterAll(() => emptyStore(store));

  it("an upload of exactly the declared bytes succeeds and lands at the session's key", async () => {
    const sessionId = newSession(alice);
    const body = new Uint8Array(randomBytes(10 * KIB));
    const grant = await uploads.requestUpload({
      principal: alice,
      sessionId,
      filename: "shot.png",
      contentType: "image/png",
      fileSize: body.byteLength,
      sha256: sha256Hex(body),
    });
    expect(grant.key).toBe(`sessions/user/alice/${sessionId}/artifacts/shot.png`);
    expect(grant.expiresIn).toBe(900);
    expect(Object.keys(grant.headers).sort()).toEqual([
      "content-length",
      "content-type",
      "x-amz-checksum-sha256",
    ]);
    await upload(grant, body);
    expect(Buffer.from((await store.get(grant.key))!).equals(body)).toBe(true);
    expect((await store.head(grant.key))?.contentType).toBe("image/png");
  });

  it("the server refuses a body or headers other than the ones validated, and a tampered signature", async () => {
    const sessionId = newSession(alice);
    const body = new Uint8Array(randomBytes(4 * KIB));
    const grant = await uploads.requestUpload({
      principal: alice,
      sessionId,
      filename: "refused.png",
      contentType: "image/png",
      fileSize: body.byteLength,
      sha256: sha256Hex(body),
    });
    const { "content-length": _length, ...withoutLength } = grant.headers;
    const url = new URL(grant.url);
    const signature = url.searchParams.get("X-Amz-Signature")!;
    url.searchParams.set(
      "X-Amz-Signature",
      `${signature.slice(0, -1)}${signature.endsWith("0") ? "1" : "0"}`,
    );
    const attempts: [string, string, Uint8Array, Record<string, string>][] = [
      ["a longer body", grant.url, new Uint8Array(body.byteLength + 1), withoutLength],
      ["a shorter body", grant.url, body.subarray(1), withoutLength],
      ["another content type", grant.url, body, { ...grant.headers, "content-type": "text/html" }],
      ["no checksum header", grant.url, body, { "content-type": "image/png" }],
      [
        "another checksum",
        grant.url,
        body,
        { ...grant.headers, "x-amz-checksum-sha256": Buffer.alloc(32).toString("base64") },
      ],
      ["a tampered signature", url.href, body, grant.headers],
    ];
    for (const [why, target, payload, headers] of attempts) {
      const response = await put(target, payload, headers);
      expect({ why, status: response.status }).toEqual({ why, status: 403 });
      expect(response.text).toContain("SignatureDoesNotMatch");
    }
    expect(await store.head(grant.key)).toBeNull();
    await upload(grant, body);
    expect((await store.head(grant.key))?.size).toBe(body.byteLength);
  });

  it("an expired upload URL is refused", async () => {
    const shortLived = uploadsWith({ uploadExpiresInSeconds: 1 });
    const sessionId = newSession(alice);
    const body = new TextEncoder().encode("late");
    const grant = await shortLived.requestUpload({
      principal: alice,
      sessionId,
      filename: "late.txt",
      contentType: "text/plain",
      fileSize: body.byteLength,
    });
    expect(grant.expiresIn).toBe(1);
    await sleep(2500);
    const response = await put(grant.url, body, grant.headers);
    expect(response.status).toBe(403);
    expect(response.text).toContain("AccessDenied");
    expect(await store.head(grant.key)).toBeNull();
  });

  it("a download URL serves the bytes as an attachment, and expires", async () => {
    const sessionId = newSession(acme);
    const body = new TextEncoder().encode("<script>alert(1)</script>");
    const grant = await uploads.requestUpload({
      principal: acme,
      sessionId,
      filename: "report.html",
      contentType: "text/html",
      fileSize: body.byteLength,
    });
    expect(grant.key).toBe(`sessions/org/acme/${sessionId}/artifacts/report.html`);
    await upload(grant, body);

    const download = await uploads.requestDownload(acme, sessionId, "report.html");
    expect(download.expiresIn).toBe(3600);
    const response = await fetch(download.url);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-disposition")).toMatch(/^attachment; filename="report.html"/);
    expect(await response.text()).toBe("<script>alert(1)</script>");

    // A 1-s URL cannot also be shown to work first: on a loaded machine the first fetch can
    // arrive after that second. AccessDenied (not SignatureDoesNotMatch) says it was the expiry.
    const shortLived = uploadsWith({ downloadExpiresInSeconds: 1 });
    const brief = await shortLived.requestDownload(acme, sessionId, "report.html");
    expect(brief.expiresIn).toBe(1);
    await sleep(2500);
    const expired = await fetch(brief.url);
    expect(expired.status).toBe(403);
    expect(await expired.text()).toContain("AccessDenied");

    await expectStowageError(uploads.requestDownload(acme, sessionId, "missing.png"), "NOT_FOUND");
  });

  it("lists the session's uploads, overwrites by name, and never touches session.json or diff.txt", async () => {
    const sessionId = newSession(alice);
    const base = `sessions/user/alice/${sessionId}/`;
    const sessionJson = new TextEncoder().encode('{"id":"s"}');
    const diff = new TextEncoder().encode("--- a\n+++ b\n");
    await store.put(`${base}session.json`, sessionJson, { contentType: "application/json" });
    await store.put(`${base}diff.txt`, diff);
    await store.put(`${base}artifacts/nested/deeper.png`, new Uint8Array(1));

    for (const [filename, size] of [
      ["b.log", 2 * KIB],
      ["a.png", 1536],
      ["b.log", 3 * KIB],
    ] as const) {
      const grant = await uploads.requestUpload({
        principal: alice,
        sessionId,
        filename,
        contentType: filename.endsWith(".png") ? "image/png" : "text/plain",
        fileSize: size,
      });
      await upload(grant, new Uint8Array(size).fill(size % 251));
    }
    const listed = await uploads.listUploads(alice, sessionId);
    expect(listed.map(({ filename, size, sizeFormatted }) => ({ filename, size, sizeFormatted }))).toEqual([
      { filename: "a.png", size: 1536, sizeFormatted: "1.5 KiB" },
      { filename: "b.log", size: 3 * KIB, sizeFormatted: "3.0 KiB" },
    ]);
    for (const item of listed) expect(item.lastModified).toBeInstanceOf(Date);
    expect(Buffer.from((await store.get(`${base}session.json`))!).equals(sessionJson)).toBe(true);
    expect(Buffer.from((await store.get(`${base}diff.txt`))!).equals(diff)).toBe(true);
  });

  describe("rejects every hostile filename, writing nothing", () => {
    const sessionId = newSession(alice);
    for (const { value, why } of HOSTILE_FILENAMES) {
      it(why, async () => {
        const request = {
          principal: alice,
          sessionId,
          filename: value as string,
          contentType: "image/png",
          fileSize: 1,
        };
        await expectStowageError(uploads.requestUpload(request), "INVALID_INPUT");
        await expectStowageError(uploads.requestDownload(alice, sessionId, value as string), "INVALID_INPUT");
        expect((await store.list({ prefix: "sessions/user/alice/" + sessionId })).items).toEqual([]);
      });
    }
  });

  it("other principals get NOT_FOUND (never FORBIDDEN: existence does not leak), and no principal UNAUTHORIZED", async () => {
    const sessionId = newSession(alice);
    const grant = await uploads.requestUpload({
      principal: alice,
      sessionId,
      filename: "private.txt",
      contentType: "text/plain",
      fileSize: 2,
    });
    await upload(grant, new TextEncoder().encode("hi"));
    const intruders: Principal[] = [bob, { kind: "org", id: "alice" }, acme];
    for (const principal of intruders) {
      const request = { principal, sessionId, filename: "x.txt", contentType: "text/plain", fileSize: 1 };
      await expectStowageError(uploads.requestUpload(request), "NOT_FOUND", "SESSION_NOT_FOUND");
      await expectStowageError(uploads.listUploads(principal, sessionId), "NOT_FOUND", "SESSION_NOT_FOUND");
      await expectStowageError(
        uploads.requestDownload(principal, sessionId, "private.txt"),
        "NOT_FOUND",
        "SESSION_NOT_FOUND",
      );
      await expectStowageError(
        uploads.completeUpload(principal, sessionId, "private.txt"),
        "NOT_FOUND",
        "SESSION_NOT_FOUND",
      );
      await expectStowageError(uploads.usage(principal, sessionId), "NOT_FOUND", "SESSION_NOT_FOUND");
    }
    await expectStowageError(
      uploads.listUploads(alice, "s-no-such-session"),
      "NOT_FOUND",
      "SESSION_NOT_FOUND",
    );
    await expectStowageError(uploads.listUploads(undefined as never, sessionId), "UNAUTHORIZED");
    await expectStowageError(uploads.listUploads(alice, "../" + sessionId), "INVALID_INPUT");
    expect((await uploads.listUploads(alice, sessionId)).map((item) => item.filename)).toEqual([
      "private.txt",
    ]);
  });

  it("a same-length upload of other bytes with the signed checksum header is stored by RGW 16, refused at completion and never served", async () => {
    const sessionId = newSession(alice);
    const honest = new Uint8Array(randomBytes(8 * KIB));
    const forged = new Uint8Array(randomBytes(8 * KIB));
    const grant = await uploads.requestUpload({
      principal: alice,
      sessionId,
      filename: "evidence.png",
      contentType: "image/png",
      fileSize: honest.byteLength,
      sha256: sha256Hex(honest),
    });
    // Exactly the signed headers, checksum included; only the bytes differ. RGW 16 stores them.
    await upload(grant, forged);
    expect(Buffer.from((await store.get(grant.key))!).equals(forged)).toBe(true);
    expect(await uploads.usage(alice, sessionId)).toMatchObject({ usedBytes: 0, pendingBytes: 8 * KIB });
    await expectStowageError(
      uploads.completeUpload(alice, sessionId, "evidence.png"),
      "INTEGRITY",
      "UPLOAD_MISMATCH",
    );
    expect(await store.head(grant.key)).toBeNull();
    await expectStowageError(
      uploads.requestDownload(alice, sessionId, "evidence.png"),
      "NOT_FOUND",
      "UPLOAD_NOT_FOUND",
    );
    expect(await uploads.listUploads(alice, sessionId)).toEqual([]);
    expect(await uploads.usage(alice, sessionId)).toMatchObject({ usedBytes: 0, objects: 0 });

    // The honest bytes through the same URL are verified (hashed on RGW) and counted at once.
    await upload(grant, honest);
    expect(await uploads.completeUpload(alice, sessionId, "evidence.png")).toMatchObject({
      filename: "evidence.png",
      size: 8 * KIB,
    });
    expect(await uploads.usage(alice, sessionId)).toMatchObject({
      usedBytes: 8 * KIB,
      pendingBytes: 0,
      pendingUploads: 0,
    });
    const download = await uploads.requestDownload(alice, sessionId, "evidence.png");
    expect(Buffer.from(await (await fetch(download.url)).arrayBuffer()).equals(honest)).toBe(true);

    // The URL can still write: forged bytes through it now never reach that download URL, which
    // serves a verified copy no upload URL can write.
    await upload(grant, forged);
    const served = await fetch(download.url);
    expect(served.headers.get("content-disposition")).toContain("evidence.png");
    expect(Buffer.from(await served.arrayBuffer()).equals(honest)).toBe(true);
  });

  it("a forged upload nobody completed is refused by the first listing and by a download request", async () => {
    const sessionId = newSession(alice);
    const request = (filename: string, body: Uint8Array) =>
      uploads.requestUpload({
        principal: alice,
        sessionId,
        filename,
        contentType: "text/plain",
        fileSize: body.byteLength,
        sha256: sha256Hex(body),
      });
    await upload(
      await request("honest.txt", new TextEncoder().encode("honest")),
      new TextEncoder().encode("honest"),
    );
    await upload(
      await request("listed.txt", new TextEncoder().encode("honest")),
      new TextEncoder().encode("forged"),
    );
    await upload(
      await request("fetched.txt", new TextEncoder().encode("honest")),
      new TextEncoder().encode("forged"),
    );
    await expectStowageError(
      uploads.requestDownload(alice, sessionId, "fetched.txt"),
      "INTEGRITY",
      "UPLOAD_MISMATCH",
    );
    expect((await uploads.listUploads(alice, sessionId)).map((item) => item.filename)).toEqual([
      "honest.txt",
    ]);
    expect(await uploads.usage(alice, sessionId)).toMatchObject({ usedBytes: 6, objects: 1 });
  });

  it("deleting a session removes its uploads and session files; usage follows", async () => {
    const sessionId = newSession(alice);
    const body = new TextEncoder().encode("to be deleted");
    const grant = await uploads.requestUpload({
      principal: alice,
      sessionId,
      filename: "gone.txt",
      contentType: "text/plain",
      fileSize: body.byteLength,
      sha256: sha256Hex(body),
    });
    await upload(grant, body);
    await uploads.completeUpload(alice, sessionId, "gone.txt");
    await store.put(`sessions/user/alice/${sessionId}/session.json`, new TextEncoder().encode("{}"));
    const deleted = await uploads.deleteSessionUploads(alice, sessionId);
    // The upload and session.json; the record of its URL is bookkeeping, removed but not counted.
    expect(deleted).toEqual({ deletedObjects: 2, deletedBytes: body.byteLength + 2 });
    expect((await store.list({ prefix: `sessions/user/alice/${sessionId}/` })).items).toEqual([]);
    expect(await uploads.usage(alice, sessionId)).toMatchObject({ usedBytes: 0, objects: 0 });
  });

  it("the retention sweep deletes old uploads, and keeps one uploaded again while it runs", async () => {
    const sessionId = newSession(alice);
    const scope = `sessions/user/alice/${sessionId}/`;
    let afterListing: () => Promise<void> = async () => {};
    // RGW as the store, with a hook once the sweep's listing has passed this session's uploads.
    const hooked: typeof store = {
      ...store,
      async *iterate(options) {
        for await (const item of store.iterate(options)) {
          yield item;
          if (item.key === `${scope}artifacts/kept.txt`) await afterListing();
        }
      },
    };
    const swept = uploadsWith({ store: hooked });
    const send = async (filename: string, text: string) => {
      const body = new TextEncoder().encode(text);
      const grant = await swept.requestUpload({
        principal: alice,
        sessionId,
        filename,
        contentType: "text/plain",
        fileSize: body.byteLength,
        sha256: sha256Hex(body),
      });
      await upload(grant, body);
      await swept.completeUpload(alice, sessionId, filename);
    };
    await send("gone.txt", "old enough to go");
    await send("kept.txt", "old too");
    // Uploaded again (another size) between the sweep's listing and its delete.
    afterListing = async () => {
      afterListing = async () => {};
      await send("kept.txt", "the same name, uploaded again");
    };
    // A retention of 2 s: both uploads are past it when the sweep starts, the new one is not.
    await sleep(3000);
    const result = await swept.sweepUploads({ olderThanDays: 2 / 86_400 });
    const mine = result.uploads
      .filter((swept) => swept.sessionId === sessionId)
      .map((swept) => swept.filename);
    expect(mine).toEqual(["gone.txt"]);
    expect(await store.head(`${scope}artifacts/gone.txt`)).toBeNull();
    expect(new TextDecoder().decode((await store.get(`${scope}artifacts/kept.txt`))!)).toBe(
      "the same name, uploaded again",
    );
    expect((await swept.listUploads(alice, sessionId)).map((listed) => listed.filename)).toEqual([
      "kept.txt",
    ]);
  });

  it("quota: of 20 concurrent requests near the limit only those that fit are granted, and all of them can upload", async () => {
    const limited = uploadsWith({ policy: createUploadPolicy({ maxTotalSizeBytes: 1024 * KIB }) });
    const sessionId = newSession(alice);
    await store.put(`sessions/user/alice/${sessionId}/session.json`, new Uint8Array(600 * KIB));
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        limited.requestUpload({
          principal: alice,
          sessionId,
          filename: `shot-${i}.png`,
          contentType: "image/png",
          fileSize: 50 * KIB,
        }),
      ),
    );
    const granted = results.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
    const refused = results.flatMap((result) => (result.status === "rejected" ? [result.reason] : []));
    expect(granted).toHaveLength(8);
    for (const reason of refused) expect(StowageError.is(reason, "QUOTA_EXCEEDED")).toBe(true);
    await Promise.all(granted.map((grant) => upload(grant, new Uint8Array(50 * KIB))));
    const total = await storedBytes(alice, sessionId);
    expect(total).toBe(1000 * KIB);
    expect(total).toBeLessThanOrEqual(1024 * KIB);
    expect(await limited.usage(alice, sessionId)).toMatchObject({
      totalBytes: 1000 * KIB,
      limitBytes: 1024 * KIB,
    });
  });

  it("quota: an overwrite replaces the old size instead of adding to it", async () => {
    const limited = uploadsWith({ policy: createUploadPolicy({ maxTotalSizeBytes: 100 * KIB }) });
    const sessionId = newSession(alice);
    const request = (filename: string, fileSize: number) =>
      limited.requestUpload({ principal: alice, sessionId, filename, contentType: "video/mp4", fileSize });
    await upload(await request("run.mp4", 80 * KIB), new Uint8Array(80 * KIB));
    const bigger = await request("run.mp4", 90 * KIB);
    await expectStowageError(request("other.mp4", 20 * KIB), "QUOTA_EXCEEDED");
    await upload(bigger, new Uint8Array(90 * KIB));
    await request("other.mp4", 10 * KIB);
    await expectStowageError(request("other.mp4", 11 * KIB), "QUOTA_EXCEEDED");
  });

  it("quota: counts a session of more than 1,000 objects", async () => {
    const limited = uploadsWith({ policy: createUploadPolicy({ maxTotalSizeBytes: 1100 * KIB }) });
    const sessionId = newSession(alice);
    const keys = Array.from(
      { length: 1050 },
      (_, i) => `sessions/user/alice/${sessionId}/artifacts/f-${i}.log`,
    );
    const queue = [...keys];
    const worker = async () => {
      for (let key = queue.pop(); key; key = queue.pop()) await store.put(key, new Uint8Array(KIB));
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    const request = (fileSize: number) =>
      limited.requestUpload({
        principal: alice,
        sessionId,
        filename: "new.log",
        contentType: "text/plain",
        fileSize,
      });
    await expectStowageError(request(51 * KIB), "QUOTA_EXCEEDED");
    await request(50 * KIB);
    expect((await limited.usage(alice, sessionId)).objects).toBe(1050);
    expect(await limited.listUploads(alice, sessionId)).toHaveLength(1050);
  });
});
