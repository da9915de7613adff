import { createHash } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  ARTIFACT_UPLOAD_URL_PATH,
  createArtifactPolicy,
  uploadArtifact,
  uploadArtifacts,
} from "../src/agent.js";

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

type Script = ({ status: number; body?: string; headers?: Record<string, string> } | "hang")[];

describe("uploadArtifact against real HTTP servers", () => {
  let dir: string;
  let storageScript: Script;
  let apiScript: Script;
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
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  beforeEach(async () => {
    storageScript = [];
    apiScript = [];
    storage = await scriptedServer((_seen, i) => storageScript[i] ?? { status: 200 });
    api = await scriptedServer(
      (_seen, i) =>
        apiScript[i] ?? {
          status: 200,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({
            url: `${storage.url}/bucket/sessions/user/u/s1/artifacts/shot.png?X-Amz-Signature=${i}`,
            key: "sessions/user/u/s1/artifacts/shot.png",
            expiresIn: 900,
            headers: grantHeaders,
          }),
        },
    );
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

  it("asks for a URL with the file's facts, then PUTs its bytes with exactly the granted headers", async () => {
    const result = await uploadArtifact(options());
    expect(result).toEqual({
      success: true,
      filename: "shot.png",
      key: "sessions/user/u/s1/artifacts/shot.png",
      size: bytes.byteLength,
      sha256,
      attempts: 2,
    });
    expect(api.seen).toHaveLength(1);
    expect(api.seen[0]).toMatchObject({ method: "POST", url: ARTIFACT_UPLOAD_URL_PATH });
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
      {
        status: 200,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          url: `${storage.url}/bucket/big.png?X-Amz-Signature=1`,
          key: "sessions/user/u/s1/artifacts/big.png",
          expiresIn: 900,
          headers: { "content-type": "image/png", "content-length": String(big.byteLength) },
        }),
      },
    ];
    const reports: number[] = [];
    const result = await uploadArtifact(
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

  it("keeps an API base path", async () => {
    await uploadArtifact(options({ apiBase: `${api.url}/v1` }));
    expect(api.seen[0]!.url).toBe(`/v1${ARTIFACT_UPLOAD_URL_PATH}`);
  });

  it("retries transient failures of the URL request and of the upload", async () => {
    apiScript = [{ status: 503 }, { status: 429, headers: { "retry-after": "0" } }];
    storageScript = [{ status: 500 }, { status: 502 }, { status: 503 }];
    const result = await uploadArtifact(options());
    expect(result).toMatchObject({ success: true, attempts: 7 });
    expect(api.seen).toHaveLength(3);
    expect(storage.seen).toHaveLength(4);
    for (const put of storage.seen) expect(put.body.byteLength).toBe(bytes.byteLength);
  });

  it("gives up after the retries with the last error, never throwing", async () => {
    storageScript = Array.from({ length: 10 }, () => ({
      status: 503,
      body: "<Error><Code>SlowDown</Code></Error>",
    }));
    const result = await uploadArtifact(options({ retries: 2 }));
    expect(result).toEqual({
      success: false,
      filename: "shot.png",
      error: "upload to storage failed: HTTP 503 SlowDown Service Unavailable",
      attempts: 4,
    });
    expect(storage.seen).toHaveLength(3);
  });

  it("does not retry a refusal, and reports the server's message", async () => {
    apiScript = [
      {
        status: 400,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          error: "session storage limit of 500.0 MB would be exceeded",
          code: "QUOTA_EXCEEDED",
        }),
      },
    ];
    const result = await uploadArtifact(options());
    expect(result).toEqual({
      success: false,
      filename: "shot.png",
      error:
        "upload URL request failed: HTTP 400 QUOTA_EXCEEDED: session storage limit of 500.0 MB would be exceeded",
      attempts: 1,
    });
    expect(storage.seen).toHaveLength(0);
  });

  it("asks for a fresh URL once when storage refuses the upload (an expired URL)", async () => {
    storageScript = [{ status: 403, body: "<Error><Code>AccessDenied</Code></Error>" }];
    const result = await uploadArtifact(options());
    expect(result).toMatchObject({ success: true, attempts: 4 });
    expect(storage.seen.map((put) => put.url)).toEqual([
      "/bucket/sessions/user/u/s1/artifacts/shot.png?X-Amz-Signature=0",
      "/bucket/sessions/user/u/s1/artifacts/shot.png?X-Amz-Signature=1",
    ]);
  });

  it("fails when the fresh URL is refused too", async () => {
    storageScript = [{ status: 403 }, { status: 403 }];
    const refused = await uploadArtifact(options({ retries: 0 }));
    expect(refused).toMatchObject({
      success: false,
      error: "upload to storage failed: HTTP 403 Forbidden",
      attempts: 4,
    });
  });

  it("retries a connection that cannot be made, then fails cleanly", async () => {
    const closed = await scriptedServer(() => ({ status: 200 }));
    await closed.close();
    const result = await uploadArtifact(options({ apiBase: closed.url, retries: 1 }));
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/^upload URL request failed: fetch failed \(.*ECONNREFUSED/);
    expect(result.attempts).toBe(2);
  });

  it("times out a stalled upload and retries it", async () => {
    storageScript = ["hang"];
    const result = await uploadArtifact(options({ uploadTimeoutMs: 200 }));
    expect(result).toMatchObject({ success: true, attempts: 3 });
  });

  it("rejects a malformed URL response", async () => {
    apiScript = [{ status: 200, body: JSON.stringify({ url: "file:///etc/passwd", headers: {} }) }];
    const result = await uploadArtifact(options({ retries: 0 }));
    expect(result).toMatchObject({
      success: false,
      error: "the upload-URL response lacks a valid url or headers",
    });
    expect(storage.seen).toHaveLength(0);
  });

  it("checks the file locally before any request", async () => {
    await mkdir(join(dir, "folder.png"), { recursive: true });
    await writeFile(join(dir, "run.sh"), "#!/bin/sh");
    await writeFile(join(dir, "big.log"), new Uint8Array(2048));
    await writeFile(join(dir, "..png"), "x");
    const cases: [Record<string, unknown>, string][] = [
      [{ filePath: join(dir, "nope.png") }, `file not found: ${join(dir, "nope.png")}`],
      [{ filePath: join(dir, "folder.png") }, `not a regular file: ${join(dir, "folder.png")}`],
      [{ filePath: join(dir, "run.sh") }, 'file type ".sh" of "run.sh" is not allowed'],
      [{ filePath: join(dir, "..png") }, "filename must not start with a dot"],
      [
        { filePath: join(dir, "big.log"), policy: createArtifactPolicy({ maxFileSizeBytes: 1024 }) },
        "file size 2.0 KB (2048 bytes) exceeds the maximum of 1.0 KB (1024 bytes) per file",
      ],
      [{ apiBase: "ftp://x" }, 'apiBase must be an http(s) URL, got "ftp://x"'],
      [{ apiBase: 42 }, "apiBase must be an http(s) URL, got 42"],
      [{ apiKey: "" }, "apiKey must be a non-empty string"],
      [
        { sessionId: "../s1" },
        'sessionId must be letters, digits, ".", "_" or "-", starting with a letter or digit, got "../s1"',
      ],
      [{ filePath: 7 }, "filePath must be a non-empty path, got 7"],
      [{ retries: -1 }, "retries must be an integer >= 0, got -1"],
    ];
    for (const [overrides, error] of cases) {
      const result = await uploadArtifact(options(overrides) as never);
      expect(result.success).toBe(false);
      expect(result.error).toContain(error);
      expect(result.attempts).toBe(0);
    }
    expect(api.seen).toHaveLength(0);
    expect(await uploadArtifact(null as never)).toMatchObject({ success: false, filename: "" });
  });

  it("stops when the caller aborts", async () => {
    storageScript = ["hang"];
    const controller = new AbortController();
    const pending = uploadArtifact(options({ signal: controller.signal }));
    setTimeout(() => controller.abort(), 100);
    expect(await pending).toMatchObject({ success: false, error: "upload aborted" });
  });

  it("uploadArtifacts returns one result per file, in order, without throwing", async () => {
    const results = await uploadArtifacts(
      [options(), options({ filePath: join(dir, "nope.png") }), options(), null as never],
      { concurrency: 2 },
    );
    expect(results.map((result) => [result.filename, result.success])).toEqual([
      ["shot.png", true],
      ["nope.png", false],
      ["shot.png", true],
      ["", false],
    ]);
    expect(await uploadArtifacts("x" as never)).toMatchObject([{ success: false }]);
  });
});
