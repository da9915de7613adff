import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync } from "node:fs";
import { link, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { uploadFile, uploadFiles } from "../src/agent/index.js";
import { createUploadPolicy } from "../src/index.js";
import { UPLOAD_COMPLETE_PATH, UPLOAD_URL_PATH } from "../src/protocol.js";

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A real HTTP server that answers from a script of statuses (then 200) and records each request. */
async function scriptedServer(
  respond: (
    seen: Seen,
    index: number,
  ) => { status: number; body?: string; headers?: Record<string, string> } | "hang",
) {
  const seen: Seen[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    const entry = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks) };
    seen.push(entry);
    const answer = respond(entry, seen.length - 1);
    if (answer === "hang") return;
    res.writeHead(answer.status, answer.headers ?? {});
    res.end(answer.body ?? "");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A scripted JSON answer. */
const jsonAnswer = (status: number, body: unknown) => ({
  status,
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});

type Script = ({ status: number; body?: string; headers?: Record<string, string> } | "hang")[];

describe("uploadFile against real HTTP servers", () => {
  let dir: string;
  let storageScript: Script;
  let apiScript: Script;
  /** Runs as each API request arrives, before it is answered. */
  let onApiRequest: (seen: Seen) => void;
  let storage: Awaited<ReturnType<typeof scriptedServer>>;
  let api: Awaited<ReturnType<typeof scriptedServer>>;
  const bytes = new TextEncoder().encode("a screenshot, honestly");
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  const grantHeaders = {
    "content-type": "image/png",
    "content-length": String(bytes.byteLength),
    "x-amz-checksum-sha256": createHash("sha256").update(bytes).digest("base64"),
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "stowage-agent-unit-"));
    await writeFile(join(dir, "shot.png"), bytes);
    // A root with a file of its own and a link that leads out of it.
    await mkdir(join(dir, "inside"));
    await writeFile(join(dir, "inside", "page.png"), bytes);
    await symlink(join(dir, "shot.png"), join(dir, "inside", "link.png"));
    // Links below a root are never followed, wherever they lead: out, or back inside.
    await symlink(dir, join(dir, "inside", "out-dir"));
    await mkdir(join(dir, "inside", "sub"));
    await writeFile(join(dir, "inside", "sub", "page.png"), bytes);
    await symlink(join(dir, "inside", "sub"), join(dir, "inside", "alias"));
    // The root itself may be a link: its owner chose it.
    await symlink(join(dir, "inside"), join(dir, "inside-link"));
    // What an agent can plant in its workspace: a FIFO (an open for reading waits for a writer,
    // for good), a hard link to a file outside, a link to the file system's root.
    execFileSync("mkfifo", [join(dir, "pipe.png")]);
    execFileSync("mkfifo", [join(dir, "inside", "pipe.png")]);
    await link(join(dir, "shot.png"), join(dir, "inside", "hard.png"));
    await symlink("/", join(dir, "to-root"));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    storageScript = [];
    apiScript = [];
    storage = await scriptedServer((_seen, i) => storageScript[i] ?? { status: 200 });
    onApiRequest = () => {};
    api = await scriptedServer((seen, i) => {
      onApiRequest(seen);
      const scripted = apiScript[i];
      if (scripted) return scripted;
      if (seen.url.endsWith(UPLOAD_COMPLETE_PATH)) {
        return jsonAnswer(200, {
          filename: "shot.png",
          size: bytes.byteLength,
          sizeFormatted: `${bytes.byteLength} B`,
          lastModified: "2026-01-02T03:04:05.000Z",
        });
      }
      return jsonAnswer(200, {
        url: `${storage.url}/bucket/sessions/user/u/s1/artifacts/shot.png?X-Amz-Signature=${i}`,
        key: "sessions/user/u/s1/artifacts/shot.png",
        expiresIn: 900,
        headers: grantHeaders,
      });
    });
  });

  afterEach(async () => {
    await storage.close();
    await api.close();
  });

  const options = (overrides: Record<string, unknown> = {}) => ({
    apiBase: `${api.url}/`,
    apiKey: "stw_key",
    sessionId: "s1",
    filePath: join(dir, "shot.png"),
    retryDelayMs: 1,
    ...overrides,
  });

  it("asks for a URL with the file's facts, PUTs its bytes with exactly the granted headers, then completes", async () => {
    const result = await uploadFile(options());
    expect(result).toEqual({
      success: true,
      filename: "shot.png",
      key: "sessions/user/u/s1/artifacts/shot.png",
      size: bytes.byteLength,
      sha256,
      attempts: 1,
      requests: 3,
    });
    expect(api.seen).toHaveLength(2);
    expect(api.seen[1]).toMatchObject({ method: "POST", url: UPLOAD_COMPLETE_PATH });
    expect(api.seen[1]!.headers.authorization).toBe("Bearer stw_key");
    expect(api.seen[1]!.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(api.seen[1]!.body.toString())).toEqual({ agentSessionId: "s1", filename: "shot.png" });
    expect(api.seen[0]).toMatchObject({ method: "POST", url: UPLOAD_URL_PATH });
    expect(api.seen[0]!.headers.authorization).toBe("Bearer stw_key");
    expect(JSON.parse(api.seen[0]!.body.toString())).toEqual({
      agentSessionId: "s1",
      filename: "shot.png",
      contentType: "image/png",
      fileSize: bytes.byteLength,
      sha256,
    });
    expect(storage.seen).toHaveLength(1);
    const put = storage.seen[0]!;
    expect(put.method).toBe("PUT");
    expect(put.url).toBe("/bucket/sessions/user/u/s1/artifacts/shot.png?X-Amz-Signature=0");
    for (const [name, value] of Object.entries(grantHeaders)) expect(put.headers[name]).toBe(value);
    expect(put.headers.authorization).toBeUndefined();
    expect(put.body.equals(Buffer.from(bytes))).toBe(true);
  });

  it("reports progress as the bytes go out, and still sends exactly the signed bytes and headers", async () => {
    const big = new Uint8Array(600 * 1024).map((_, i) => i % 251);
    await writeFile(join(dir, "big.png"), big);
    apiScript = [
      jsonAnswer(200, {
        url: `${storage.url}/bucket/big.png?X-Amz-Signature=1`,
        key: "sessions/user/u/s1/artifacts/big.png",
        expiresIn: 900,
        headers: { "content-type": "image/png", "content-length": String(big.byteLength) },
      }),
    ];
    const reports: number[] = [];
    const result = await uploadFile(
      options({
        filePath: join(dir, "big.png"),
        onProgress: (progress: { filename: string; sentBytes: number; totalBytes: number }) => {
          expect(progress).toMatchObject({ filename: "big.png", totalBytes: big.byteLength });
          reports.push(progress.sentBytes);
          if (reports.length === 2) throw new Error("a broken progress bar");
        },
      }),
    );
    expect(result.success).toBe(true);
    expect(reports[0]).toBe(0);
    expect(reports.at(-1)).toBe(big.byteLength);
    expect(reports).toEqual([...reports].sort((a, b) => a - b));
    expect(reports.length).toBeGreaterThanOrEqual(4);
    expect(storage.seen[0]!.headers["content-length"]).toBe(String(big.byteLength));
    expect(storage.seen[0]!.headers["transfer-encoding"]).toBeUndefined();
    expect(storage.seen[0]!.body.equals(Buffer.from(big))).toBe(true);
  });

  it("sends through the caller's own fetch when it gives one: the same bytes, headers and progress", async () => {
    const big = new Uint8Array(600 * 1024).map((_, i) => (i * 7) % 253);
    await writeFile(join(dir, "via-fetch.png"), big);
    apiScript = [
      jsonAnswer(200, {
        url: `${storage.url}/bucket/via-fetch.png?X-Amz-Signature=1`,
        key: "sessions/user/u/s1/artifacts/via-fetch.png",
        expiresIn: 900,
        headers: { "content-type": "image/png", "content-length": String(big.byteLength) },
      }),
    ];
    const calls: string[] = [];
    const reports: number[] = [];
    const result = await uploadFile(
      options({
        filePath: join(dir, "via-fetch.png"),
        fetch: (input: string | URL | Request, init?: RequestInit) => {
          calls.push(`${init?.method ?? "GET"} ${new URL(String(input)).pathname}`);
          return fetch(input, init);
        },
        onProgress: (progress: { sentBytes: number }) => reports.push(progress.sentBytes),
      }),
    );
    expect(result).toMatchObject({ success: true, size: big.byteLength });
    expect(calls).toEqual([
      `POST ${UPLOAD_URL_PATH}`,
      "PUT /bucket/via-fetch.png",
      `POST ${UPLOAD_COMPLETE_PATH}`,
    ]);
    expect(storage.seen[0]!.body.equals(Buffer.from(big))).toBe(true);
    expect(storage.seen[0]!.headers["content-length"]).toBe(String(big.byteLength));
    expect(reports.at(-1)).toBe(big.byteLength);
  });

  it("uploads an empty file", async () => {
    await writeFile(join(dir, "empty.log"), "");
    apiScript = [
      jsonAnswer(200, {
        url: `${storage.url}/bucket/empty.log?X-Amz-Signature=1`,
        key: "sessions/user/u/s1/artifacts/empty.log",
        expiresIn: 900,
        headers: { "content-type": "text/plain", "content-length": "0" },
      }),
    ];
    const result = await uploadFile(options({ filePath: join(dir, "empty.log") }));
    expect(result).toMatchObject({
      success: true,
      size: 0,
      sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    });
    expect(storage.seen[0]).toMatchObject({ method: "PUT" });
    expect(storage.seen[0]!.body.byteLength).toBe(0);
  });

  it("keeps an API base path", async () => {
    await uploadFile(options({ apiBase: `${api.url}/v1` }));
    expect(api.seen.map((request) => request.url)).toEqual([
      `/v1${UPLOAD_URL_PATH}`,
      `/v1${UPLOAD_COMPLETE_PATH}`,
    ]);
  });

  it("reports a completion the server refused (the stored bytes are not the file's) as a failure", async () => {
    apiScript = [
      undefined as never,
      jsonAnswer(422, {
        error: "upload does not match what its URL bound",
        code: "INTEGRITY",
        reason: "UPLOAD_MISMATCH",
      }),
    ];
    const result = await uploadFile(options());
    expect(result).toEqual({
      success: false,
      filename: "shot.png",
      error: expect.any(String),
      code: "INTEGRITY",
      reason: "UPLOAD_MISMATCH",
      attempts: 1,
      requests: 3,
    });
  });

  it("retries a completion that failed transiently", async () => {
    apiScript = [undefined as never, { status: 503 }];
    expect(await uploadFile(options())).toMatchObject({ success: true, attempts: 2, requests: 4 });
  });

  it("accepts a server without the completion route (it verifies on listing instead)", async () => {
    for (const answer of [
      jsonAnswer(404, { error: "no such upload API route", code: "NOT_FOUND", reason: "NO_SUCH_ROUTE" }),
      { status: 404, body: "Not Found" },
    ]) {
      apiScript = [undefined as never, answer];
      api.seen.length = 0;
      expect(await uploadFile(options())).toMatchObject({ success: true, requests: 3 });
    }
    apiScript = [
      undefined as never,
      jsonAnswer(404, { error: "no such upload", code: "NOT_FOUND", reason: "UPLOAD_NOT_FOUND" }),
    ];
    api.seen.length = 0;
    expect(await uploadFile(options())).toMatchObject({
      success: false,
      code: "NOT_FOUND",
      reason: "UPLOAD_NOT_FOUND",
    });
  });

  it("refuses to send a file that changed size after it was hashed", async () => {
    await writeFile(join(dir, "growing.log"), "first line\n");
    apiScript = [
      jsonAnswer(200, {
        url: `${storage.url}/bucket/growing.log?X-Amz-Signature=1`,
        key: "sessions/user/u/s1/artifacts/growing.log",
        expiresIn: 900,
        headers: { "content-type": "text/plain", "content-length": "11" },
      }),
    ];
    // The file grows after it was hashed, while its URL is being signed.
    onApiRequest = () => appendFileSync(join(dir, "growing.log"), "a second line\n");
    const result = await uploadFile(options({ filePath: join(dir, "growing.log") }));
    expect(result).toMatchObject({ success: false, code: "CONFLICT", reason: "FILE_CHANGED" });
    expect(storage.seen).toHaveLength(0);
  });

  it("retries transient failures of the URL request and of the upload", async () => {
    apiScript = [{ status: 503 }, { status: 429, headers: { "retry-after": "0" } }];
    storageScript = [{ status: 500 }, { status: 502 }, { status: 503 }];
    const result = await uploadFile(options());
    expect(result).toMatchObject({ success: true, attempts: 6, requests: 8 });
    expect(api.seen).toHaveLength(4);
    expect(storage.seen).toHaveLength(4);
    for (const put of storage.seen) expect(put.body.byteLength).toBe(bytes.byteLength);
  });

  it("gives up after the retries with the last error, never throwing", async () => {
    storageScript = Array.from({ length: 10 }, () => ({
      status: 503,
      body: "<Error><Code>SlowDown</Code></Error>",
    }));
    const result = await uploadFile(options({ retries: 2 }));
    expect(result).toEqual({
      success: false,
      filename: "shot.png",
      error: expect.any(String),
      code: "UNAVAILABLE",
      reason: "SlowDown",
      attempts: 3,
      requests: 4,
    });
    expect(storage.seen).toHaveLength(3);
  });

  it("does not retry a refusal, and reports the server's code and reason", async () => {
    apiScript = [
      jsonAnswer(400, {
        error: "session storage limit of 500.0 MiB would be exceeded",
        code: "QUOTA_EXCEEDED",
        reason: "SESSION_QUOTA_EXCEEDED",
      }),
    ];
    const result = await uploadFile(options());
    expect(result).toEqual({
      success: false,
      filename: "shot.png",
      error: expect.any(String),
      code: "QUOTA_EXCEEDED",
      reason: "SESSION_QUOTA_EXCEEDED",
      attempts: 1,
      requests: 1,
    });
    expect(storage.seen).toHaveLength(0);
  });

  it("reads only the one wire format: another error shape gets a code from the status alone", async () => {
    apiScript = [jsonAnswer(400, { error: { code: "QUOTA_EXCEEDED", message: "over the limit" } })];
    const result = await uploadFile(options());
    expect(result).toMatchObject({ success: false, code: "INVALID_INPUT", requests: 1 });
    expect(result.reason).toBeUndefined();
  });

  it("asks for a fresh URL once when storage refuses the upload (an expired URL)", async () => {
    storageScript = [{ status: 403, body: "<Error><Code>AccessDenied</Code></Error>" }];
    const result = await uploadFile(options());
    expect(result).toMatchObject({ success: true, attempts: 2, requests: 5 });
    expect(storage.seen.map((put) => put.url)).toEqual([
      "/bucket/sessions/user/u/s1/artifacts/shot.png?X-Amz-Signature=0",
      "/bucket/sessions/user/u/s1/artifacts/shot.png?X-Amz-Signature=1",
    ]);
  });

  it("fails when the fresh URL is refused too", async () => {
    storageScript = [{ status: 403 }, { status: 403 }];
    const refused = await uploadFile(options({ retries: 0 }));
    expect(refused).toMatchObject({ success: false, code: "FORBIDDEN", attempts: 2, requests: 4 });
  });

  it("asks for a fresh URL when storage answers that the URL expired (410, core's wire format)", async () => {
    storageScript = [jsonAnswer(410, { error: "signed URL has expired", code: "EXPIRED" })];
    expect(await uploadFile(options())).toMatchObject({ success: true, requests: 5 });
  });

  it("retries a connection that cannot be made, then fails cleanly", async () => {
    const closed = await scriptedServer(() => ({ status: 200 }));
    await closed.close();
    const result = await uploadFile(options({ apiBase: closed.url, retries: 1 }));
    expect(result).toMatchObject({ success: false, code: "UNAVAILABLE", requests: 2 });
  });

  it("times out a stalled upload and retries it", async () => {
    storageScript = ["hang"];
    const result = await uploadFile(options({ uploadTimeoutMs: 200 }));
    expect(result).toMatchObject({ success: true, requests: 4 });
  });

  it("rejects a malformed URL response", async () => {
    apiScript = [{ status: 200, body: JSON.stringify({ url: "file:///etc/passwd", headers: {} }) }];
    const result = await uploadFile(options({ retries: 0 }));
    expect(result).toMatchObject({ success: false, code: "INTERNAL", reason: "INVALID_UPLOAD_GRANT" });
    expect(storage.seen).toHaveLength(0);
  });

  it("checks the file locally before any request", async () => {
    await mkdir(join(dir, "folder.png"), { recursive: true });
    await writeFile(join(dir, "run.sh"), "#!/bin/sh");
    await writeFile(join(dir, "big.log"), new Uint8Array(2048));
    await writeFile(join(dir, "..png"), "x");
    const cases: [Record<string, unknown>, string, string?][] = [
      [{ filePath: join(dir, "nope.png") }, "NOT_FOUND"],
      [{ filePath: join(dir, "folder.png") }, "FORBIDDEN", "NOT_A_REGULAR_FILE"],
      [{ filePath: join(dir, "pipe.png") }, "FORBIDDEN", "NOT_A_REGULAR_FILE"],
      [{ filename: 42 }, "INVALID_INPUT"],
      [{ filename: "../up.png" }, "INVALID_INPUT", "INVALID_FILENAME"],
      [{ filePath: join(dir, "run.sh") }, "INVALID_INPUT", "FILE_TYPE_NOT_ALLOWED"],
      [{ filePath: join(dir, "..png") }, "INVALID_INPUT", "INVALID_FILENAME"],
      [
        { filePath: join(dir, "big.log"), policy: createUploadPolicy({ maxFileSizeBytes: 1024 }) },
        "TOO_LARGE",
        "FILE_TOO_LARGE",
      ],
      [{ apiBase: "ftp://x" }, "INVALID_INPUT"],
      [{ apiBase: 42 }, "INVALID_INPUT"],
      [{ apiKey: "" }, "INVALID_INPUT"],
      [{ sessionId: "../s1" }, "INVALID_INPUT"],
      [{ filePath: 7 }, "INVALID_INPUT", "INVALID_PATH"],
      [{ retries: -1 }, "INVALID_INPUT"],
      // Under a root (the tool's, wherever a model picks the path), nothing outside it is read.
      [{ root: join(dir, "inside"), filePath: "../shot.png" }, "FORBIDDEN", "OUTSIDE_ROOT"],
      [{ root: join(dir, "inside"), filePath: join(dir, "shot.png") }, "FORBIDDEN", "OUTSIDE_ROOT"],
      [{ root: join(dir, "inside"), filePath: "link.png" }, "FORBIDDEN", "SYMLINK_REFUSED"],
      [{ root: join(dir, "inside"), filePath: "out-dir/shot.png" }, "FORBIDDEN", "SYMLINK_REFUSED"],
      [{ root: join(dir, "inside"), filePath: "alias/page.png" }, "FORBIDDEN", "SYMLINK_REFUSED"],
      [
        { root: join(dir, "inside"), filePath: join(dir, "inside", "alias", "page.png") },
        "FORBIDDEN",
        "SYMLINK_REFUSED",
      ],
      [{ root: join(dir, "inside"), filePath: "sub/../../shot.png" }, "FORBIDDEN", "OUTSIDE_ROOT"],
      [
        { root: join(dir, "inside"), filePath: `${join(dir, "inside")}-other/page.png` },
        "FORBIDDEN",
        "OUTSIDE_ROOT",
      ],
      [{ root: join(dir, "inside"), filePath: "." }, "FORBIDDEN", "OUTSIDE_ROOT"],
      [{ root: join(dir, "inside"), filePath: "page.png/x.png" }, "NOT_FOUND", "ENOENT"],
      [{ root: join(dir, "inside"), filePath: "no-dir/x.png" }, "NOT_FOUND", "ENOENT"],
      [{ root: join(dir, "inside"), filePath: "nope.png" }, "NOT_FOUND", "ENOENT"],
      [{ root: join(dir, "inside"), filePath: "pipe.png" }, "FORBIDDEN", "NOT_A_REGULAR_FILE"],
      [{ root: join(dir, "inside"), filePath: "hard.png" }, "FORBIDDEN", "HARD_LINKED"],
      [{ root: "/", filePath: join(dir, "shot.png") }, "INVALID_INPUT", "INVALID_UPLOAD_ROOT"],
      [
        { root: join(dir, "to-root"), filePath: join(dir, "shot.png") },
        "INVALID_INPUT",
        "INVALID_UPLOAD_ROOT",
      ],
      [{ root: join(dir, "no-such-root") }, "INVALID_INPUT", "INVALID_UPLOAD_ROOT"],
      [{ root: "" }, "INVALID_INPUT"],
      [{ root: "a\u0000b" }, "INVALID_INPUT"],
      [{ root: 42 }, "INVALID_INPUT"],
    ];
    for (const [overrides, code, reason] of cases) {
      const result = await uploadFile(options(overrides) as never);
      expect({ overrides, ...result }).toMatchObject({ success: false, code, attempts: 0 });
      expect({ overrides, reason: result.reason }).toEqual({ overrides, reason });
      expect(result.error).toEqual(expect.any(String));
    }
    expect(api.seen).toHaveLength(0);
    expect(await uploadFile(null as never)).toMatchObject({ success: false, filename: "" });
    // Options that cannot even be read are a result too, never a TypeError.
    const throwing = Object.defineProperty(options(), "filePath", {
      enumerable: true,
      get() {
        throw new Error("boom");
      },
    });
    const trapped = new Proxy(options(), {
      ownKeys() {
        throw new Error("trap");
      },
    });
    for (const hostile of [throwing, trapped]) {
      expect(await uploadFile(hostile as never)).toMatchObject({ success: false, code: "INVALID_INPUT" });
      expect(await uploadFiles([hostile as never])).toMatchObject([
        { success: false, code: "INVALID_INPUT" },
      ]);
      expect(await uploadFiles([options()], hostile as never)).toMatchObject([
        { success: false, code: "INVALID_INPUT" },
      ]);
    }
    expect(api.seen).toHaveLength(0);
  });

  it("uploads a file inside its root, by a path relative to it", async () => {
    const result = await uploadFile(options({ root: join(dir, "inside"), filePath: "page.png" }));
    expect(result).toMatchObject({ success: true, filename: "page.png", size: bytes.byteLength });
  });

  it("uploads by an absolute path that spells the root as given or as its real path, and walks down", async () => {
    const link = join(dir, "inside-link");
    for (const filePath of [
      join(link, "sub", "page.png"),
      join(dir, "inside", "sub", "page.png"),
      "sub/../sub/page.png",
    ]) {
      const result = await uploadFile(options({ root: link, filePath }));
      expect({ filePath, ...result }).toMatchObject({ filePath, success: true, size: bytes.byteLength });
    }
  });

  it("stores a file under the filename given, not its own name", async () => {
    const result = await uploadFile(options({ filename: "renamed.png" }));
    expect(result).toMatchObject({ success: true, filename: "renamed.png" });
    expect(JSON.parse(api.seen[0]!.body.toString())).toMatchObject({ filename: "renamed.png" });
  });

  it("stops when the caller aborts", async () => {
    storageScript = ["hang"];
    const controller = new AbortController();
    const pending = uploadFile(options({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 100);
    expect(await pending).toMatchObject({ success: false, code: "ABORTED" });
  });

  it("uploadFiles returns one result per file, in order, without throwing", async () => {
    const results = await uploadFiles(
      [options(), options({ filePath: join(dir, "nope.png") }), options(), null as never],
      { concurrency: 2 },
    );
    expect(results.map((result) => [result.filename, result.success])).toEqual([
      ["shot.png", true],
      ["nope.png", false],
      ["shot.png", true],
      ["", false],
    ]);
    expect(await uploadFiles("x" as never)).toMatchObject([{ success: false }]);
  });
});
