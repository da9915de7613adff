import { createHash, randomBytes, randomUUID } from "node:crypto";
import { StowageError, type StowageErrorCode } from "@stowage/core";
import { afterAll, describe, expect, it } from "vitest";
import { HOSTILE_FILENAMES } from "../test/support/filenames.js";
import { bucket, emptyPrefix, s3SkipReason, testClient, uniquePrefix } from "../test/support/s3-env.js";
import { createApiKeys } from "./api-keys.js";
import type { Principal } from "./artifact-keys.js";
import { createArtifactPolicy } from "./artifact-policy.js";
import { type ArtifactUploadsOptions, createArtifactUploads, type UploadGrant } from "./artifact-uploads.js";

const KIB = 1024;
const client = testClient();
const prefix = uniquePrefix("artifact-uploads");
const alice: Principal = { kind: "user", id: "alice" };
const bob: Principal = { kind: "user", id: "bob" };
const acme: Principal = { kind: "org", id: "acme" };
const owners = new Map<string, Principal>();
const apiKeys = createApiKeys();

/** A new session owned by `owner`. */
function newSession(owner: Principal): string {
  const id = `s-${randomUUID()}`;
  owners.set(id, owner);
  return id;
}

function uploadsWith(options: Partial<ArtifactUploadsOptions> = {}) {
  return createArtifactUploads({
    client,
    bucket,
    prefix,
    auth: { authenticate: apiKeys.authenticate, sessionOwner: (id) => owners.get(id) ?? null },
    ...options,
  });
}

const sha256Hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

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

async function codeOf(promise: Promise<unknown>): Promise<StowageErrorCode | "success"> {
  return promise.then(
    () => "success",
    (err: unknown) => {
      if (StowageError.is(err)) return err.code;
      throw err;
    },
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(s3SkipReason !== undefined)("artifact uploads on Ceph RGW", () => {
  const uploads = uploadsWith();
  const { store } = uploads;

  afterAll(() => emptyPrefix(client, prefix));

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
    expect(await shortLived.store.head(grant.key)).toBeNull();
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

    const shortLived = uploadsWith({ downloadExpiresInSeconds: 1 });
    const brief = await shortLived.requestDownload(acme, sessionId, "report.html");
    expect((await fetch(brief.url)).status).toBe(200);
    await sleep(2500);
    expect((await fetch(brief.url)).status).toBe(403);

    expect(await codeOf(uploads.requestDownload(acme, sessionId, "missing.png"))).toBe("NOT_FOUND");
  });

  it("lists the session's artifacts, overwrites by name, and never touches session.json or diff.txt", async () => {
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
    const listed = await uploads.listArtifacts(alice, sessionId);
    expect(listed.map(({ filename, size, sizeFormatted }) => ({ filename, size, sizeFormatted }))).toEqual([
      { filename: "a.png", size: 1536, sizeFormatted: "1.5 KB" },
      { filename: "b.log", size: 3 * KIB, sizeFormatted: "3.0 KB" },
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
        expect(await codeOf(uploads.requestUpload(request))).toBe("INVALID_INPUT");
        expect(await codeOf(uploads.requestDownload(alice, sessionId, value as string))).toBe(
          "INVALID_INPUT",
        );
        expect((await store.list({ prefix: "sessions/user/alice/" + sessionId })).items).toEqual([]);
      });
    }
  });

  it("other principals get FORBIDDEN, and no principal UNAUTHORIZED", async () => {
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
      expect(await codeOf(uploads.requestUpload(request))).toBe("FORBIDDEN");
      expect(await codeOf(uploads.listArtifacts(principal, sessionId))).toBe("FORBIDDEN");
      expect(await codeOf(uploads.requestDownload(principal, sessionId, "private.txt"))).toBe("FORBIDDEN");
      expect(await codeOf(uploads.usage(principal, sessionId))).toBe("FORBIDDEN");
    }
    expect(await codeOf(uploads.listArtifacts(alice, "s-no-such-session"))).toBe("FORBIDDEN");
    expect(await codeOf(uploads.listArtifacts(undefined as never, sessionId))).toBe("UNAUTHORIZED");
    expect(await codeOf(uploads.listArtifacts(alice, "../" + sessionId))).toBe("INVALID_INPUT");
    expect((await uploads.listArtifacts(alice, sessionId)).map((item) => item.filename)).toEqual([
      "private.txt",
    ]);
  });

  it("resolves principals from Bearer API keys", async () => {
    const { apiKey } = await apiKeys.issue(alice);
    expect(await uploads.authenticate(`Bearer ${apiKey}`)).toEqual(alice);
    expect(await codeOf(uploads.authenticate(`Bearer ${apiKey.slice(0, -1)}x`))).toBe("UNAUTHORIZED");
    expect(await codeOf(uploads.authenticate(undefined))).toBe("UNAUTHORIZED");
  });

  it("quota: of 20 concurrent requests near the limit only those that fit are granted, and all of them can upload", async () => {
    const limited = uploadsWith({ policy: createArtifactPolicy({ maxTotalSizeBytes: 1024 * KIB }) });
    const sessionId = newSession(alice);
    await limited.store.put(`sessions/user/alice/${sessionId}/session.json`, new Uint8Array(600 * KIB));
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
    let total = 0;
    for await (const item of limited.store.iterate({ prefix: `sessions/user/alice/${sessionId}/` }))
      total += item.size;
    expect(total).toBe(1000 * KIB);
    expect(total).toBeLessThanOrEqual(1024 * KIB);
    expect(await limited.usage(alice, sessionId)).toMatchObject({
      totalBytes: 1000 * KIB,
      limitBytes: 1024 * KIB,
    });
  });

  it("quota: an overwrite replaces the old size instead of adding to it", async () => {
    const limited = uploadsWith({ policy: createArtifactPolicy({ maxTotalSizeBytes: 100 * KIB }) });
    const sessionId = newSession(alice);
    const request = (filename: string, fileSize: number) =>
      limited.requestUpload({ principal: alice, sessionId, filename, contentType: "video/mp4", fileSize });
    await upload(await request("run.mp4", 80 * KIB), new Uint8Array(80 * KIB));
    const bigger = await request("run.mp4", 90 * KIB);
    expect(await codeOf(request("other.mp4", 20 * KIB))).toBe("QUOTA_EXCEEDED");
    await upload(bigger, new Uint8Array(90 * KIB));
    expect(await codeOf(request("other.mp4", 10 * KIB))).toBe("success");
    expect(await codeOf(request("other.mp4", 11 * KIB))).toBe("QUOTA_EXCEEDED");
  });

  it("quota: counts a session of more than 1,000 objects", async () => {
    const limited = uploadsWith({ policy: createArtifactPolicy({ maxTotalSizeBytes: 1100 * KIB }) });
    const sessionId = newSession(alice);
    const keys = Array.from(
      { length: 1050 },
      (_, i) => `sessions/user/alice/${sessionId}/artifacts/f-${i}.log`,
    );
    const queue = [...keys];
    const worker = async () => {
      for (let key = queue.pop(); key; key = queue.pop()) await limited.store.put(key, new Uint8Array(KIB));
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
    expect(await codeOf(request(51 * KIB))).toBe("QUOTA_EXCEEDED");
    expect(await codeOf(request(50 * KIB))).toBe("success");
    expect((await limited.usage(alice, sessionId)).objects).toBe(1050);
    expect(await limited.listArtifacts(alice, sessionId)).toHaveLength(1050);
  }, 120_000);
});
