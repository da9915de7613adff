import { createHash } from "node:crypto";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { createServer, request as httpRequest, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { StowageError } from "@stowage/core";
import { TEMP_FILE_PREFIX } from "@stowage/core/fs";
import { expectStowageError } from "@stowage/core/testing";
import {
  createFsObjectStore,
  type FsDirectUrlOptions,
  type FsObjectStore,
  SHA256_HEADER,
} from "@stowage/storage-fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const SECRET = "a-test-secret-that-is-at-least-32-bytes-long";

function toRequest(req: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(`http://${req.headers.host}${req.url}`, {
    method: req.method,
    headers,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" } : {}),
  } as RequestInit);
}

/** Sends exactly the given headers and body, which fetch would refuse to do for hostile cases. */
function rawRequest(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: Uint8Array,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => {
        text += chunk.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    if (body) req.write(body);
    req.end();
  });
}

let root: string;
let store: FsObjectStore;
let baseUrl: string;
const server = createServer(async (req, res) => {
  const response = await store.handleDirectRequest!(toRequest(req));
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body)
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) res.write(chunk);
  res.end();
});

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "stowage-direct-"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/direct`;
  store = createFsObjectStore({ root, directUrls: { baseUrl, secret: SECRET } });
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(root, { recursive: true, force: true });
});

const png = new Uint8Array(5000).map((_, i) => i % 256);
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const key = "sessions/user/u1/s1/artifacts/screen.png";
const signUpload = (
  overrides: Partial<{ key: string; contentLength: number; sha256: string; expiresInSeconds: number }> = {},
) =>
  store.createUploadUrl!({
    key,
    contentType: "image/png",
    contentLength: png.byteLength,
    expiresInSeconds: 900,
    ...overrides,
  });
/** The code of an error response in the one wire format, `{ error: "<message>", code, reason? }`. */
function codeIn(body: string): string {
  const parsed = JSON.parse(body) as { error: unknown; code: string };
  expect(typeof parsed.error).toBe("string");
  return parsed.code;
}

describe("fs direct upload and download URLs over HTTP", () => {
  it("declares the capability and signs URLs that bind size, type and checksum", async () => {
    expect(store.capabilities).toMatchObject({ directUpload: true, directDownload: true });
    const signed = await signUpload({ sha256: sha256(png) });
    expect(signed.method).toBe("PUT");
    expect(signed.url.startsWith(`${baseUrl}/sessions/user/u1/s1/artifacts/screen.png?`)).toBe(true);
    expect(signed.headers).toEqual({
      "content-type": "image/png",
      "content-length": "5000",
      [SHA256_HEADER]: sha256(png),
    });
    expect(signed.expiresAt.getTime()).toBeGreaterThan(Date.now() + 890_000);
  });

  it("accepts the declared bytes with exactly the signed headers, then serves them back", async () => {
    const signed = await signUpload({ sha256: sha256(png) });
    const put = await fetch(signed.url, { method: "PUT", headers: signed.headers, body: png });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({ key, size: 5000 });
    expect(await store.get(key)).toEqual(png);

    const download = await store.createDownloadUrl!({ key, expiresInSeconds: 3600 });
    const got = await fetch(download.url);
    expect(got.status).toBe(200);
    expect(got.headers.get("content-type")).toBe("image/png");
    expect(got.headers.get("x-content-type-options")).toBe("nosniff");
    expect(new Uint8Array(await got.arrayBuffer())).toEqual(png);
    const head = await fetch(download.url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("5000");
  });

  it("the same filename uploaded again replaces the object (last wins)", async () => {
    const second = png.map((byte) => 255 - byte);
    const signed = await signUpload();
    expect((await fetch(signed.url, { method: "PUT", headers: signed.headers, body: second })).status).toBe(
      200,
    );
    expect(await store.get(key)).toEqual(second);
  });

  describe("rejects what was not signed, and stores nothing", () => {
    const target = "sessions/user/u1/s1/artifacts/rejected.png";
    const cases: [string, () => Promise<{ status: number; body: string }>, number, string][] = [
      [
        "a longer body (with its true length)",
        async () => {
          const signed = await signUpload({ key: target });
          const longer = new Uint8Array(png.byteLength + 10);
          return rawRequest(
            signed.url,
            "PUT",
            { ...signed.headers, "content-length": String(longer.byteLength) },
            longer,
          );
        },
        403,
        "FORBIDDEN",
      ],
      [
        "a shorter body (with its true length)",
        async () => {
          const signed = await signUpload({ key: target });
          return rawRequest(
            signed.url,
            "PUT",
            { ...signed.headers, "content-length": "10" },
            png.subarray(0, 10),
          );
        },
        403,
        "FORBIDDEN",
      ],
      [
        "another content type",
        async () => {
          const signed = await signUpload({ key: target });
          return rawRequest(signed.url, "PUT", { ...signed.headers, "content-type": "text/html" }, png);
        },
        403,
        "FORBIDDEN",
      ],
      [
        "a tampered signature",
        async () => {
          const signed = await signUpload({ key: target });
          const url = new URL(signed.url);
          const signature = url.searchParams.get("signature")!;
          url.searchParams.set("signature", `${signature[0] === "A" ? "B" : "A"}${signature.slice(1)}`);
          return rawRequest(url.href, "PUT", signed.headers, png);
        },
        403,
        "FORBIDDEN",
      ],
      [
        "a signed length changed in the URL",
        async () => {
          const signed = await signUpload({ key: target });
          const url = new URL(signed.url);
          url.searchParams.set("length", "6000");
          const bigger = new Uint8Array(6000);
          return rawRequest(url.href, "PUT", { ...signed.headers, "content-length": "6000" }, bigger);
        },
        403,
        "FORBIDDEN",
      ],
      [
        "another key in the path",
        async () => {
          const signed = await signUpload({ key: target });
          return rawRequest(signed.url.replace("rejected.png", "other.png"), "PUT", signed.headers, png);
        },
        403,
        "FORBIDDEN",
      ],
      [
        "bytes that do not match the signed SHA-256",
        async () => {
          const signed = await signUpload({ key: target, sha256: sha256(png) });
          return rawRequest(
            signed.url,
            "PUT",
            signed.headers,
            png.map((byte) => byte ^ 1),
          );
        },
        422,
        "INTEGRITY",
      ],
      [
        "a missing checksum header when one was signed",
        async () => {
          const signed = await signUpload({ key: target, sha256: sha256(png) });
          const { [SHA256_HEADER]: _, ...headers } = signed.headers;
          return rawRequest(signed.url, "PUT", headers, png);
        },
        403,
        "FORBIDDEN",
      ],
      [
        "a download URL used to upload",
        async () => {
          const signed = await store.createDownloadUrl!({ key: target, expiresInSeconds: 60 });
          return rawRequest(
            signed.url,
            "PUT",
            { "content-type": "image/png", "content-length": "5000" },
            png,
          );
        },
        403,
        "FORBIDDEN",
      ],
      [
        "an unsigned URL",
        () =>
          rawRequest(
            `${baseUrl}/${target}`,
            "PUT",
            { "content-type": "image/png", "content-length": "5000" },
            png,
          ),
        403,
        "FORBIDDEN",
      ],
    ];
    for (const [why, send, status, code] of cases) {
      it(why, async () => {
        const response = await send();
        expect(response.status).toBe(status);
        expect(codeIn(response.body)).toBe(code);
        expect(await store.head(target)).toBeNull();
      });
    }
  });

  it("refuses an expired URL, for upload and download", async () => {
    const upload = await signUpload({ key: "sessions/late.png", expiresInSeconds: 1 });
    const download = await store.createDownloadUrl!({ key, expiresInSeconds: 1 });
    await sleep(2100);
    const put = await rawRequest(upload.url, "PUT", upload.headers, png);
    expect(put.status).toBe(410);
    expect(codeIn(put.body)).toBe("EXPIRED");
    expect(await store.head("sessions/late.png")).toBeNull();
    const get = await fetch(download.url);
    expect(get.status).toBe(410);
  });

  it("rejects hostile paths without touching anything outside the store", async () => {
    for (const path of [
      "..%2F..%2Fetc%2Fpasswd",
      "%2e%2e/%2e%2e/x",
      "a%00b",
      "a/%2F/b",
      "%E0%A4%A",
      "a//b",
    ]) {
      const response = await rawRequest(`${baseUrl}/${path}?expires=9999999999&signature=x`, "GET", {});
      // 404: the URL parser resolves "%2e%2e" segments, which leaves the mount point entirely.
      expect([400, 403, 404]).toContain(response.status);
    }
    expect((await readdir(root)).sort()).toEqual(["sessions"]);
  });

  it("refuses to sign a key the store refuses: the reserved temp-file segment", async () => {
    for (const key of [`${TEMP_FILE_PREFIX}x`, `a/${TEMP_FILE_PREFIX}0123456789abcdef`]) {
      const upload = store.createUploadUrl!({
        key,
        contentLength: 1,
        contentType: "text/plain",
        expiresInSeconds: 60,
      });
      expect((await expectStowageError(upload, "INVALID_INPUT")).message).toContain("reserved");
      await expectStowageError(store.createDownloadUrl!({ key, expiresInSeconds: 60 }), "INVALID_INPUT");
    }
  });

  it("serves unknown types as downloads, never as a page", async () => {
    await store.put("sessions/page.html", new TextEncoder().encode("<script>alert(1)</script>"));
    const signed = await store.createDownloadUrl!({ key: "sessions/page.html", expiresInSeconds: 60 });
    const got = await fetch(signed.url);
    expect(got.headers.get("content-type")).toBe("application/octet-stream");
    expect(got.headers.get("content-disposition")).toBe(
      `attachment; filename="page.html"; filename*=UTF-8''page.html`,
    );
    // Asking for inline changes the disposition, never the type: the browser still will not render it.
    const inline = await store.createDownloadUrl!({
      key: "sessions/page.html",
      expiresInSeconds: 60,
      disposition: "inline",
    });
    const shown = await fetch(inline.url);
    expect(shown.headers.get("content-type")).toBe("application/octet-stream");
    expect(shown.headers.get("x-content-type-options")).toBe("nosniff");
    expect(shown.headers.get("content-disposition")).toMatch(/^inline;/);
  });

  it("serves the signed disposition and file name, and defaults to inline for images", async () => {
    const plain = await fetch((await store.createDownloadUrl!({ key, expiresInSeconds: 60 })).url);
    expect(plain.headers.get("content-disposition")).toBe(
      `inline; filename="screen.png"; filename*=UTF-8''screen.png`,
    );
    const signed = await store.createDownloadUrl!({
      key,
      expiresInSeconds: 60,
      disposition: "attachment",
      filename: 'Bericht "März".png',
    });
    const got = await fetch(signed.url);
    expect(got.status).toBe(200);
    expect(got.headers.get("content-type")).toBe("image/png");
    // RFC 6266: an ASCII fallback (non-ASCII and quotes replaced) beside the exact UTF-8 name.
    expect(got.headers.get("content-disposition")).toBe(
      `attachment; filename="Bericht _M_rz_.png"; filename*=UTF-8''Bericht%20%22M%C3%A4rz%22.png`,
    );
  });

  it.each([
    ["another disposition", (url: URL) => url.searchParams.set("disposition", "inline")],
    ["another file name", (url: URL) => url.searchParams.set("filename", "evil.html")],
    ["no disposition", (url: URL) => url.searchParams.delete("disposition")],
    ["a malformed disposition", (url: URL) => url.searchParams.set("disposition", "form-data")],
  ])("refuses a download URL changed to carry %s", async (_why, tamper) => {
    const signed = await store.createDownloadUrl!({
      key,
      expiresInSeconds: 60,
      disposition: "attachment",
      filename: "screen.png",
    });
    const url = new URL(signed.url);
    tamper(url);
    const response = await rawRequest(url.href, "GET", {});
    expect(response.status).toBe(403);
    expect(codeIn(response.body)).toBe("FORBIDDEN");
  });

  it("answers every refusal in the one error wire format", async () => {
    const response = await rawRequest(`${baseUrl}/${key}`, "GET", {});
    expect(response.status).toBe(403);
    expect(JSON.parse(response.body)).toEqual({
      error: expect.any(String),
      code: "FORBIDDEN",
      reason: "UNSIGNED",
    });
    const missing = await store.createDownloadUrl!({ key: "sessions/none.png", expiresInSeconds: 60 });
    const notFound = await rawRequest(missing.url, "GET", {});
    expect(notFound.status).toBe(404);
    expect(JSON.parse(notFound.body)).toEqual({ error: expect.any(String), code: "NOT_FOUND" });
  });

  it("names keys, never the store's directory, in the errors it answers", async () => {
    // A file where the upload's directory should be: the store fails with the path it failed on.
    await writeFile(join(root, "sessions", "user", "u1", "s1", "blocked"), "a file");
    const blocked = "sessions/user/u1/s1/blocked/shot.png";
    const signed = await signUpload({ key: blocked });
    const put = await fetch(signed.url, { method: "PUT", headers: signed.headers, body: png });
    expect(put.status).toBe(409);
    const body = await put.text();
    expect(JSON.parse(body)).toMatchObject({ code: "CONFLICT", reason: "NOT_A_DIRECTORY" });
    expect(body).not.toContain(root);
    expect(body).toContain("sessions/user/u1/s1/blocked");
    const download = await store.createDownloadUrl!({ key: blocked, expiresInSeconds: 60 });
    const got = await fetch(download.url);
    expect(await got.text()).not.toContain(root);
  });
});

describe("fs direct uploads asked about before they are stored (checkUpload)", () => {
  /** Runs `test` with the server's store replaced by one that asks `checkUpload`. */
  async function withCheck(
    checkUpload: NonNullable<Parameters<typeof createFsObjectStore>[0]["directUrls"]>["checkUpload"],
    test: () => Promise<void>,
  ) {
    const plain = store;
    store = createFsObjectStore({ root, directUrls: { baseUrl, secret: SECRET, checkUpload } });
    try {
      await test();
    } finally {
      store = plain;
    }
  }
  const revoked = () => new StowageError("FORBIDDEN", "revoked", { reason: "UPLOAD_REVOKED" });

  it("is asked with what the URL binds, before, at the end of the body and after storing", async () => {
    const asked: unknown[] = [];
    await withCheck(
      async (upload) => {
        asked.push(upload);
      },
      async () => {
        await store.delete(key);
        const signed = await signUpload({ sha256: sha256(png) });
        expect((await fetch(signed.url, { method: "PUT", headers: signed.headers, body: png })).status).toBe(
          200,
        );
        const bound = {
          key,
          contentType: "image/png",
          contentLength: 5000,
          sha256: sha256(png),
          expiresAt: signed.expiresAt,
        };
        expect(asked).toEqual([bound, bound, bound]);
      },
    );
  });

  it.each([
    ["before the body is read", 1],
    ["once the body has arrived, before it is published", 2],
    ["after it was stored (it is removed)", 3],
  ])("a refusal %s answers 403 with its reason and leaves nothing", async (_when, refuseAt) => {
    let calls = 0;
    await withCheck(
      async () => {
        if (++calls >= refuseAt) throw revoked();
      },
      async () => {
        await store.delete(key);
        const signed = await signUpload();
        const response = await fetch(signed.url, { method: "PUT", headers: signed.headers, body: png });
        expect(response.status).toBe(403);
        expect(await response.json()).toMatchObject({ code: "FORBIDDEN", reason: "UPLOAD_REVOKED" });
        expect(await store.head(key)).toBeNull();
        expect(
          (await readdir(join(root, "sessions/user/u1/s1/artifacts"))).filter((name) =>
            name.startsWith(TEMP_FILE_PREFIX),
          ),
        ).toEqual([]);
      },
    );
  });

  it("is not asked about a download", async () => {
    await store.put(key, png);
    await withCheck(
      async () => {
        throw revoked();
      },
      async () => {
        const download = await store.createDownloadUrl!({ key, expiresInSeconds: 60 });
        expect((await fetch(download.url)).status).toBe(200);
      },
    );
  });
});

describe("fs direct downloads asked about before they are served (checkDownload)", () => {
  const gone = () => new StowageError("NOT_FOUND", "no session s1", { reason: "SESSION_NOT_FOUND" });
  const storeAsking = (checkDownload: FsDirectUrlOptions["checkDownload"]) =>
    createFsObjectStore({ root, directUrls: { baseUrl, secret: SECRET, checkDownload } });

  it("is asked with the key and expiry the URL binds; a refusal of GET or HEAD answers its error and serves nothing", async () => {
    await store.put(key, png);
    const asked: unknown[] = [];
    const refusing = storeAsking(async (download) => {
      asked.push(download);
      throw gone();
    });
    const download = await refusing.createDownloadUrl!({ key, expiresInSeconds: 60 });
    for (const method of ["GET", "HEAD"]) {
      const response = await refusing.handleDirectRequest!(new Request(download.url, { method }));
      expect(response.status, method).toBe(404);
      expect(response.headers.get("content-disposition"), method).toBeNull();
      if (method === "GET") {
        expect(await response.json()).toMatchObject({ code: "NOT_FOUND", reason: "SESSION_NOT_FOUND" });
      }
    }
    expect(asked).toEqual([
      { key, expiresAt: download.expiresAt },
      { key, expiresAt: download.expiresAt },
    ]);
    const serving = storeAsking(async () => {});
    const served = await serving.handleDirectRequest!(new Request(download.url));
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(png);
  });

  it("is not asked about an upload, nor about a URL whose signature fails", async () => {
    let asked = 0;
    const counting = storeAsking(async () => {
      asked++;
      throw gone();
    });
    await counting.delete(key);
    const signed = await counting.createUploadUrl!({
      key,
      contentType: "image/png",
      contentLength: png.byteLength,
      expiresInSeconds: 60,
    });
    const put = await counting.handleDirectRequest!(
      new Request(signed.url, {
        method: "PUT",
        headers: signed.headers,
        body: png,
        duplex: "half",
      } as RequestInit),
    );
    expect(put.status).toBe(200);
    const download = await counting.createDownloadUrl!({ key, expiresInSeconds: 60 });
    const forged = download.url.replace(/signature=[^&]+/, `signature=${"0".repeat(64)}`);
    expect((await counting.handleDirectRequest!(new Request(forged))).status).toBe(403);
    expect(asked).toBe(0);
  });
});

describe("fs direct URL options", () => {
  it("is off unless configured", () => {
    const plain = createFsObjectStore({ root: "/tmp/unused" });
    expect(plain.capabilities.directUpload).toBe(false);
    expect(plain.handleDirectRequest).toBeUndefined();
  });

  it.each([
    ["a short secret", { baseUrl: "http://127.0.0.1/direct", secret: "short" }],
    ["a non-http base URL", { baseUrl: "file:///etc", secret: SECRET }],
    ["a base URL with a query", { baseUrl: "http://127.0.0.1/d?x=1", secret: SECRET }],
    ["a malformed base URL", { baseUrl: "not a url", secret: SECRET }],
    [
      "a checkUpload that is not a function",
      { baseUrl: "http://127.0.0.1/direct", secret: SECRET, checkUpload: "yes" },
    ],
    [
      "a checkDownload that is not a function",
      { baseUrl: "http://127.0.0.1/direct", secret: SECRET, checkDownload: {} },
    ],
  ])("rejects %s", async (_why, directUrls) => {
    await expectStowageError(
      () => createFsObjectStore({ root: "/tmp/unused", directUrls: directUrls as FsDirectUrlOptions }),
      "INVALID_INPUT",
    );
  });

  it("takes a secret of 32 bytes and refuses one of 31, saying the limit", async () => {
    const directUrls = (secret: string) => ({ baseUrl: "http://127.0.0.1/direct", secret });
    expect(
      createFsObjectStore({ root: "/tmp/unused", directUrls: directUrls("x".repeat(32)) }),
    ).toBeDefined();
    const err = await expectStowageError(
      () => createFsObjectStore({ root: "/tmp/unused", directUrls: directUrls("x".repeat(31)) }),
      "INVALID_INPUT",
    );
    expect(err.details).toEqual({ limit: 32 });
  });
});
