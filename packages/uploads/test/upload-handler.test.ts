import type { Principal } from "@stowage/core";
// The upload API over real HTTP: the package's handler mounted on a node:http server behind the
// app's own authentication (test keys standing in for it), with the file-system store's signed
// URLs served beside it, as an app with no S3 mounts them. `artifacts` in paths, keys and bodies
// is the design document's wire name.

import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { StowageErrorCode } from "@stowage/core";
import { type RecordedWarning, recordingLogger } from "@stowage/core/testing";
import { createFsObjectStore } from "@stowage/storage-fs";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { uploadFile } from "../src/agent/index.js";
import {
  createUploadService,
  handleUploadRequest,
  type UploadListResponseBody,
  type UploadUrlResponseBody,
} from "../src/index.js";
import {
  UPLOAD_COMPLETE_PATH,
  UPLOAD_POLICY_PATH,
  UPLOAD_URL_PATH,
  uploadDownloadPath,
  uploadListPath,
} from "../src/protocol.js";
import { HOSTILE_FILENAMES } from "./support/filenames.js";
import { type RawResponse, rawRequest } from "./support/raw-request.js";
import { createTestKeys, mountUploadApi } from "./support/test-keys.js";
import { type FetchHandler, startFetchServer } from "./support/upload-server.js";

const alice: Principal = { kind: "user", id: "alice" };
const bob: Principal = { kind: "user", id: "bob" };
// Sessions live in each principal's namespace: bob has an "s1" of his own, unrelated to alice's.
const sessions = new Set(["user:alice/s1", "user:bob/s1", "user:bob/s2"]);
const apiKeys = createTestKeys();
const warnings: RecordedWarning[] = [];
const { logger } = recordingLogger(warnings);
const root = await tempDirectory("stowage-upload-handler-");
const files = await tempDirectory("stowage-upload-files-");

// Mounted below, once the server's address (the fs store's signed URL base) is known.
let handle: FetchHandler = () => Promise.reject(new Error("nothing mounted yet"));
const server = await startFetchServer((request) => handle(request));
const store = createFsObjectStore({
  root,
  directUrls: { baseUrl: `${server.url}direct`, secret: "a test secret of at least 32 bytes!" },
});
const uploads = createUploadService({
  store,
  sessionExists: (principal, id) => {
    if (id === "explodes") throw new Error("database password=hunter2 at db.ts:12");
    return sessions.has(`${principal.kind}:${principal.id}/${id}`);
  },
  logger,
});
const api = mountUploadApi(uploads, apiKeys, logger);
handle = (request) => {
  const { pathname } = new URL(request.url);
  if (pathname.startsWith("/direct/")) return store.handleDirectRequest!(request);
  // A caller whose own authentication said "bob", whatever the request's headers say.
  if (pathname.startsWith("/as-bob/")) {
    const inner = new Request(new URL(pathname.slice("/as-bob".length), request.url), request);
    return handleUploadRequest(uploads, inner, { principal: bob });
  }
  return api(request);
};

const aliceKey = (await apiKeys.issue(alice)).apiKey;
const bearer = { authorization: `Bearer ${aliceKey}` };
const json = { ...bearer, "content-type": "application/json" };
const goodBody = { agentSessionId: "s1", filename: "shot.png", contentType: "image/png", fileSize: 5 };

/** Every key in the store: refused requests must leave it as it was. */
async function storedKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const item of store.iterate()) keys.push(item.key);
  return keys;
}

/** A refusal in core's one wire format: JSON `{ error, code, reason? }` with the table's status. */
function expectRefusal(response: RawResponse, status: number, code: StowageErrorCode, reason?: string) {
  expect(response.headers["content-type"]).toMatch(/^application\/json/);
  const body = JSON.parse(response.body) as { error: unknown; code: unknown; reason?: unknown };
  expect({ status: response.status, code: body.code, reason: body.reason }).toEqual({ status, code, reason });
  expect(body.error).toEqual(expect.any(String));
}

const postUploadUrl = (body: string | Uint8Array, headers: Record<string, string> = json) =>
  rawRequest(server.url, { method: "POST", path: UPLOAD_URL_PATH, headers, body });
const postComplete = (body: string | Uint8Array, headers: Record<string, string> = json) =>
  rawRequest(server.url, { method: "POST", path: UPLOAD_COMPLETE_PATH, headers, body });

/** A hostile body: why, the body, its headers, and the refusal expected (status, code, reason). */
type BodyRow = [string, string | Uint8Array, Record<string, string>, number, StowageErrorCode, string?];

/** One test per row: `post` answers the row's refusal and the store is left as it was. */
function refusesEach(
  rows: readonly BodyRow[],
  post: (body: string | Uint8Array, headers: Record<string, string>) => Promise<RawResponse>,
): void {
  for (const [why, body, headers, status, code, reason] of rows) {
    it(why, async () => {
      const before = await storedKeys();
      expectRefusal(await post(body, headers), status, code, reason);
      expect(await storedKeys()).toEqual(before);
    });
  }
}

describe("the upload API over HTTP", () => {
  it("an agent uploads through it to the fs store; the file is listed and downloads as an attachment", async () => {
    const bytes = new TextEncoder().encode("<h1>report</h1>");
    await writeFile(join(files, "report.html"), bytes);
    const result = await uploadFile({
      apiBase: server.url,
      apiKey: aliceKey,
      sessionId: "s1",
      filePath: join(files, "report.html"),
    });
    expect(result).toMatchObject({
      success: true,
      key: "sessions/user/alice/s1/artifacts/report.html",
      size: bytes.byteLength,
      // The URL request, the PUT and the completion.
      requests: 3,
    });

    const listed = await fetch(new URL(uploadListPath("s1"), server.url), { headers: bearer });
    expect(listed.headers.get("cache-control")).toBe("no-store");
    const { artifacts } = (await listed.json()) as UploadListResponseBody;
    expect(artifacts).toEqual([
      {
        filename: "report.html",
        size: bytes.byteLength,
        sizeFormatted: `${bytes.byteLength} B`,
        lastModified: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      },
    ]);

    const grant = await fetch(new URL(uploadDownloadPath("s1", "report.html"), server.url), {
      headers: bearer,
    });
    const { url, expiresIn } = (await grant.json()) as { url: string; expiresIn: number };
    expect(expiresIn).toBe(3600);
    const download = await fetch(url);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-disposition")).toMatch(/^attachment;/);
    expect(Buffer.from(await download.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
  });

  it("answers an upload-URL request with exactly the documented fields", async () => {
    const response = await postUploadUrl(JSON.stringify({ ...goodBody, filename: "fields.png" }));
    expect(response.status).toBe(200);
    expect(response.headers["cache-control"]).toBe("no-store");
    const grant = JSON.parse(response.body) as UploadUrlResponseBody;
    expect(Object.keys(grant).sort()).toEqual(["expiresIn", "headers", "key", "url"]);
    expect(grant).toMatchObject({ key: "sessions/user/alice/s1/artifacts/fields.png", expiresIn: 900 });
    expect(grant.headers).toMatchObject({ "content-type": "image/png", "content-length": "5" });
  });

  it("called without a principal, answers 401 UNAUTHORIZED before reading anything else", async () => {
    const before = await storedKeys();
    const contexts: [unknown, string][] = [
      [undefined, "no context"],
      [{}, "a context without a principal"],
      [{ principal: undefined }, "an undefined principal"],
      [{ principal: null }, "a null principal"],
    ];
    for (const [context, why] of contexts) {
      for (const path of [
        UPLOAD_URL_PATH,
        UPLOAD_COMPLETE_PATH,
        UPLOAD_POLICY_PATH,
        uploadListPath("s1"),
        uploadDownloadPath("s1", "shot.png"),
      ]) {
        const method = path === UPLOAD_URL_PATH || path === UPLOAD_COMPLETE_PATH ? "POST" : "GET";
        // A valid key in the header changes nothing: the handler never reads it.
        const request = new Request(new URL(path, server.url), {
          method,
          headers: json,
          ...(method === "POST" ? { body: JSON.stringify(goodBody) } : {}),
        });
        const response = await handleUploadRequest(uploads, request, context as never);
        expect(response.headers.get("content-type")).toMatch(/^application\/json/);
        expect({ why, path, status: response.status, body: await response.json() }).toEqual({
          why,
          path,
          status: 401,
          body: { error: expect.any(String), code: "UNAUTHORIZED" },
        });
      }
    }
    expect(await storedKeys()).toEqual(before);
  });

  it("answers someone else's session and an unknown one alike: 404, never 403", async () => {
    await fetch(new URL(uploadListPath("s1"), server.url), { headers: bearer });
    const before = await storedKeys();
    for (const sessionId of ["s2", "no-such-session"]) {
      expectRefusal(
        await postUploadUrl(JSON.stringify({ ...goodBody, agentSessionId: sessionId })),
        404,
        "NOT_FOUND",
        "SESSION_NOT_FOUND",
      );
      expectRefusal(
        await postComplete(JSON.stringify({ agentSessionId: sessionId, filename: "report.html" })),
        404,
        "NOT_FOUND",
        "SESSION_NOT_FOUND",
      );
      for (const path of [uploadListPath(sessionId), uploadDownloadPath(sessionId, "report.html")]) {
        expectRefusal(
          await rawRequest(server.url, { method: "GET", path, headers: bearer }),
          404,
          "NOT_FOUND",
          "SESSION_NOT_FOUND",
        );
      }
    }
    expect(await storedKeys()).toEqual(before);
  });

  it("keeps two principals' sessions of the same id apart", async () => {
    const bobKey = (await apiKeys.issue(bob)).apiKey;
    const bobsFile = join(files, "bob.txt");
    await writeFile(bobsFile, "bob's own notes");
    const result = await uploadFile({
      apiBase: server.url,
      apiKey: bobKey,
      sessionId: "s1",
      filePath: bobsFile,
    });
    expect(result).toMatchObject({ success: true, key: "sessions/user/bob/s1/artifacts/bob.txt" });
    const list = async (key: string) => {
      const response = await fetch(new URL(uploadListPath("s1"), server.url), {
        headers: { authorization: `Bearer ${key}` },
      });
      return ((await response.json()) as UploadListResponseBody).artifacts.map((entry) => entry.filename);
    };
    expect(await list(bobKey)).toEqual(["bob.txt"]);
    expect(await list(aliceKey)).not.toContain("bob.txt");
    // Alice cannot reach bob's file through her own s1.
    expectRefusal(
      await rawRequest(server.url, {
        method: "GET",
        path: uploadDownloadPath("s1", "bob.txt"),
        headers: bearer,
      }),
      404,
      "NOT_FOUND",
      "UPLOAD_NOT_FOUND",
    );
  });

  it("acts for the principal its caller passes, whatever the request's Authorization header says", async () => {
    // No Authorization header at all: the caller said who this is.
    const response = await rawRequest(server.url, {
      method: "POST",
      path: `/as-bob${UPLOAD_URL_PATH}`,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...goodBody, agentSessionId: "s2", filename: "from-app.png" }),
    });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toMatchObject({ key: "sessions/user/bob/s2/artifacts/from-app.png" });
    const listed = await rawRequest(server.url, { method: "GET", path: `/as-bob${uploadListPath("s2")}` });
    expect(listed.status).toBe(200);
    // Alice's key in the header: still bob's session s2 (alice has none), never alice's s1.
    const withAlicesKey = await rawRequest(server.url, {
      method: "POST",
      path: `/as-bob${UPLOAD_URL_PATH}`,
      headers: json,
      body: JSON.stringify({ ...goodBody, filename: "from-app.png" }),
    });
    expect(JSON.parse(withAlicesKey.body)).toMatchObject({
      key: "sessions/user/bob/s1/artifacts/from-app.png",
    });
    // A caller that passes something else is answered as its own bug: INTERNAL, 500.
    const broken = await handleUploadRequest(
      uploads,
      new Request(new URL(uploadListPath("s2"), server.url)),
      {
        principal: { kind: "team", id: "x" } as never,
        logger,
      },
    );
    expect(broken.status).toBe(500);
    expect(await broken.json()).toMatchObject({ code: "INTERNAL" });
  });

  it("completes an upload: the verified file as a listing shows it, or why not", async () => {
    await writeFile(join(files, "done.txt"), "done");
    expect(
      await uploadFile({
        apiBase: server.url,
        apiKey: aliceKey,
        sessionId: "s1",
        filePath: join(files, "done.txt"),
      }),
    ).toMatchObject({ success: true });
    const response = await postComplete(JSON.stringify({ agentSessionId: "s1", filename: "done.txt" }));
    expect(response.status).toBe(200);
    expect(response.headers["cache-control"]).toBe("no-store");
    expect(JSON.parse(response.body)).toEqual({
      filename: "done.txt",
      size: 4,
      sizeFormatted: "4 B",
      lastModified: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expectRefusal(
      await postComplete(JSON.stringify({ agentSessionId: "s1", filename: "never-uploaded.png" })),
      404,
      "NOT_FOUND",
      "UPLOAD_NOT_FOUND",
    );
  });

  describe("hostile paths", () => {
    const rows: [string, string, number, StowageErrorCode, string?][] = [
      ["GET", UPLOAD_URL_PATH, 400, "INVALID_INPUT", "METHOD_NOT_ALLOWED"],
      ["PUT", UPLOAD_URL_PATH, 400, "INVALID_INPUT", "METHOD_NOT_ALLOWED"],
      ["GET", UPLOAD_COMPLETE_PATH, 400, "INVALID_INPUT", "METHOD_NOT_ALLOWED"],
      ["DELETE", UPLOAD_COMPLETE_PATH, 400, "INVALID_INPUT", "METHOD_NOT_ALLOWED"],
      ["POST", "/agents/artifacts/complete/", 404, "NOT_FOUND", "NO_SUCH_ROUTE"],
      ["POST", "/agents/artifacts/completed", 404, "NOT_FOUND", "NO_SUCH_ROUTE"],
      ["POST", "/agents/artifacts/Complete", 404, "NOT_FOUND", "NO_SUCH_ROUTE"],
      ["POST", "/agents/s1/artifacts", 400, "INVALID_INPUT", "METHOD_NOT_ALLOWED"],
      ["DELETE", "/agents/s1/artifacts/shot.png/download", 400, "INVALID_INPUT", "METHOD_NOT_ALLOWED"],
      ["GET", "/", 404, "NOT_FOUND", "NO_SUCH_ROUTE"],
      ["GET", "/agents", 404, "NOT_FOUND", "NO_SUCH_ROUTE"],
      ["GET", "/agents/", 404, "NOT_FOUND", "NO_SUCH_ROUTE"],
      ["GET", "/agents/s1/artifacts/", 404, "NOT_FOUND", "NO_SUCH_ROUTE"],
      ["GET", "/agents/s1/artifacts/shot.png", 404, "NOT_FOUND", "NO_SUCH_ROUTE"],
      ["GET", "/agents/s1/artifacts/shot.png/download/more", 404, "NOT_FOUND", "NO_SUCH_ROUTE"],
      ["GET", "/agents//artifacts", 404, "NOT_FOUND", "NO_SUCH_ROUTE"],
      ["GET", "/AGENTS/s1/artifacts", 404, "NOT_FOUND", "NO_SUCH_ROUTE"],
      ["GET", "/agents/s1/artifacts/../../../etc/passwd", 404, "NOT_FOUND", "NO_SUCH_ROUTE"],
      ["GET", "/agents/s1/artifacts/%2e%2e/download", 404, "NOT_FOUND", "NO_SUCH_ROUTE"],
      ["GET", "/agents/%E0%A4%A/artifacts", 400, "INVALID_INPUT", "INVALID_PATH"],
      ["GET", "/agents/s1/artifacts/%FF.png/download", 400, "INVALID_INPUT", "INVALID_PATH"],
      ["GET", "/agents/..%2Fs1/artifacts", 400, "INVALID_INPUT"],
      ["GET", "/agents/s1%00/artifacts", 400, "INVALID_INPUT"],
      // URL parsing reads %2e%2e as "..": the path collapses to /artifacts.
      ["GET", "/agents/%2e%2e/artifacts", 404, "NOT_FOUND", "NO_SUCH_ROUTE"],
      ["GET", "/agents/.hidden/artifacts", 400, "INVALID_INPUT"],
      ["GET", "/agents/s1/artifacts/..%2Fsession.json/download", 400, "INVALID_INPUT", "INVALID_FILENAME"],
      ["GET", "/agents/s1/artifacts/%2e%2e%2fdiff.txt/download", 400, "INVALID_INPUT", "INVALID_FILENAME"],
      ["GET", "/agents/s1/artifacts/shot.png%00.txt/download", 400, "INVALID_INPUT", "INVALID_FILENAME"],
      ["GET", "/agents/s1/artifacts/missing.png/download", 404, "NOT_FOUND", "UPLOAD_NOT_FOUND"],
    ];
    for (const [method, path, status, code, reason] of rows) {
      it(`${method} ${path} → ${status} ${code}${reason ? ` (${reason})` : ""}`, async () => {
        const before = await storedKeys();
        const response = await rawRequest(server.url, { method, path, headers: bearer });
        expectRefusal(response, status, code, reason);
        if (reason === "METHOD_NOT_ALLOWED") expect(response.headers.allow).toMatch(/^(GET|POST)$/);
        expect(await storedKeys()).toEqual(before);
      });
    }
  });

  describe("hostile filenames, in the body and in the path", () => {
    for (const { value, why } of HOSTILE_FILENAMES) {
      it(why, async () => {
        const before = await storedKeys();
        expectRefusal(
          await postUploadUrl(JSON.stringify({ ...goodBody, filename: value })),
          400,
          "INVALID_INPUT",
          "INVALID_FILENAME",
        );
        expectRefusal(
          await postComplete(JSON.stringify({ agentSessionId: "s1", filename: value })),
          400,
          "INVALID_INPUT",
          "INVALID_FILENAME",
        );
        // A lone surrogate cannot be percent-encoded at all; a client cannot send it in a path.
        if (typeof value === "string" && (value as string & { isWellFormed(): boolean }).isWellFormed()) {
          // Sent as a client would encode it; "." and ".." stay as they are and collapse the path.
          const response = await rawRequest(server.url, {
            method: "GET",
            path: uploadDownloadPath("s1", value),
            headers: bearer,
          });
          expect([400, 404]).toContain(response.status);
          expect(JSON.parse(response.body)).toMatchObject({
            code: response.status === 400 ? "INVALID_INPUT" : "NOT_FOUND",
          });
        }
        expect(await storedKeys()).toEqual(before);
      });
    }
  });

  describe("hostile completion bodies", () => {
    const done = { agentSessionId: "s1", filename: "report.html" };
    const rows: BodyRow[] = [
      ["not JSON", "{", json, 400, "INVALID_INPUT", "INVALID_BODY"],
      ["an empty body", "", json, 400, "INVALID_INPUT", "INVALID_BODY"],
      ["a JSON array", JSON.stringify([done]), json, 400, "INVALID_INPUT", "INVALID_BODY"],
      ["no content type", JSON.stringify(done), bearer, 400, "INVALID_INPUT", "INVALID_BODY"],
      [
        "a body over 16 KiB",
        JSON.stringify({ ...done, padding: "x".repeat(16 * 1024) }),
        json,
        413,
        "TOO_LARGE",
        "BODY_TOO_LARGE",
      ],
      ["no agentSessionId", JSON.stringify({ filename: "report.html" }), json, 400, "INVALID_INPUT"],
      [
        "a traversal session id",
        JSON.stringify({ ...done, agentSessionId: "../s1" }),
        json,
        400,
        "INVALID_INPUT",
      ],
      ["a numeric session id", JSON.stringify({ ...done, agentSessionId: 1 }), json, 400, "INVALID_INPUT"],
      [
        "no filename",
        JSON.stringify({ agentSessionId: "s1" }),
        json,
        400,
        "INVALID_INPUT",
        "INVALID_FILENAME",
      ],
      [
        "a path as filename",
        JSON.stringify({ ...done, filename: "../session.json" }),
        json,
        400,
        "INVALID_INPUT",
        "INVALID_FILENAME",
      ],
      [
        "a prototype key",
        '{"__proto__":{"filename":"report.html"},"agentSessionId":"s1"}',
        json,
        400,
        "INVALID_INPUT",
        "INVALID_FILENAME",
      ],
    ];
    refusesEach(rows, postComplete);
  });

  describe("hostile bodies", () => {
    const big = JSON.stringify({ ...goodBody, padding: "x".repeat(16 * 1024) });
    const rows: BodyRow[] = [
      ["not JSON", "{", json, 400, "INVALID_INPUT", "INVALID_BODY"],
      ["an empty body", "", json, 400, "INVALID_INPUT", "INVALID_BODY"],
      ["a JSON array", "[]", json, 400, "INVALID_INPUT", "INVALID_BODY"],
      ["JSON null", "null", json, 400, "INVALID_INPUT", "INVALID_BODY"],
      ["a JSON string", '"shot.png"', json, 400, "INVALID_INPUT", "INVALID_BODY"],
      ["invalid UTF-8", new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), json, 400, "INVALID_INPUT", "INVALID_BODY"],
      ["no content type", JSON.stringify(goodBody), bearer, 400, "INVALID_INPUT", "INVALID_BODY"],
      [
        "text/plain",
        JSON.stringify(goodBody),
        { ...bearer, "content-type": "text/plain" },
        400,
        "INVALID_INPUT",
        "INVALID_BODY",
      ],
      ["a body over 16 KiB", big, json, 413, "TOO_LARGE", "BODY_TOO_LARGE"],
      [
        "no agentSessionId",
        JSON.stringify({ ...goodBody, agentSessionId: undefined }),
        json,
        400,
        "INVALID_INPUT",
      ],
      [
        "a traversal session id",
        JSON.stringify({ ...goodBody, agentSessionId: "../s1" }),
        json,
        400,
        "INVALID_INPUT",
      ],
      [
        "a session id of 129 characters",
        JSON.stringify({ ...goodBody, agentSessionId: "s".repeat(129) }),
        json,
        400,
        "INVALID_INPUT",
      ],
      [
        "a numeric session id",
        JSON.stringify({ ...goodBody, agentSessionId: 1 }),
        json,
        400,
        "INVALID_INPUT",
      ],
      [
        "a size as a string",
        JSON.stringify({ ...goodBody, fileSize: "5" }),
        json,
        400,
        "INVALID_INPUT",
        "INVALID_FILE_SIZE",
      ],
      [
        "a negative size",
        JSON.stringify({ ...goodBody, fileSize: -1 }),
        json,
        400,
        "INVALID_INPUT",
        "INVALID_FILE_SIZE",
      ],
      [
        "a size of 1e300",
        '{"agentSessionId":"s1","filename":"a.png","contentType":"image/png","fileSize":1e300}',
        json,
        400,
        "INVALID_INPUT",
        "INVALID_FILE_SIZE",
      ],
      [
        "a size over the limit",
        JSON.stringify({ ...goodBody, fileSize: 50 * 1024 * 1024 + 1 }),
        json,
        413,
        "TOO_LARGE",
        "FILE_TOO_LARGE",
      ],
      [
        "a type that does not match",
        JSON.stringify({ ...goodBody, contentType: "text/html" }),
        json,
        400,
        "INVALID_INPUT",
        "CONTENT_TYPE_MISMATCH",
      ],
      [
        "a header injection in the type",
        JSON.stringify({ ...goodBody, contentType: "image/png\r\nx-amz-acl: public-read" }),
        json,
        400,
        "INVALID_INPUT",
        "CONTENT_TYPE_MISMATCH",
      ],
      [
        "an executable",
        JSON.stringify({ ...goodBody, filename: "run.exe" }),
        json,
        400,
        "INVALID_INPUT",
        "FILE_TYPE_NOT_ALLOWED",
      ],
      [
        "an upper-case sha256",
        JSON.stringify({ ...goodBody, sha256: "A".repeat(64) }),
        json,
        400,
        "INVALID_INPUT",
      ],
      [
        "a prototype key",
        '{"__proto__":{"filename":"x.png"},"agentSessionId":"s1","contentType":"image/png","fileSize":1}',
        json,
        400,
        "INVALID_INPUT",
        "INVALID_FILENAME",
      ],
    ];
    refusesEach(rows, postUploadUrl);

    it("a chunked body over 16 KiB without a content-length", async () => {
      const response = await fetch(new URL(UPLOAD_URL_PATH, server.url), {
        method: "POST",
        headers: json,
        body: new ReadableStream({
          start(controller) {
            for (let i = 0; i < 20; i++) controller.enqueue(new Uint8Array(1024).fill(0x20));
            controller.close();
          },
        }),
        duplex: "half",
      } as RequestInit);
      expect(response.status).toBe(413);
      expect(await response.json()).toMatchObject({ code: "TOO_LARGE", reason: "BODY_TOO_LARGE" });
    });
  });

  it("answers an unexpected failure as a bare INTERNAL, and logs it", async () => {
    const response = await rawRequest(server.url, {
      method: "GET",
      path: uploadListPath("explodes"),
      headers: bearer,
    });
    expect(response.status).toBe(500);
    expect(JSON.parse(response.body)).toEqual({ error: "internal error", code: "INTERNAL" });
    expect(response.body).not.toContain("hunter2");
    expect(JSON.stringify(warnings)).toContain("hunter2");
  });
});
