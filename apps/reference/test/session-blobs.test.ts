import { randomBytes, randomUUID } from "node:crypto";
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { captureSession, fromTransport, restoreSession, toTransport } from "@stowage/sessions";
import { realisticSessionTree, sampleSessionBlob, writeSessionTree } from "@stowage/sessions/testing";
import { tempDirectory } from "@stowage/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { errorCode, startTestApp, type TestApp } from "./support/test-app.js";

let app: TestApp;
let key: string;
const base = await tempDirectory("stowage-app-session-blobs-");

beforeAll(async () => {
  app = await startTestApp();
  key = await app.keyFor({ kind: "user", id: "tester" });
});
afterAll(() => app.close());

const junk = () => randomBytes(600).toString("base64");
/** A small valid session in transport form. */
const good = () => toTransport(sampleSessionBlob({ sessionId: randomUUID() }));

/** A real capture of a small Claude Code session tree (transcript, subagents, tool results). */
async function capturedClaudeSession() {
  const sessionId = randomUUID();
  const cwd = join(base, `work-${sessionId.slice(0, 8)}`);
  await mkdir(cwd);
  const configDir = join(base, `config-${sessionId.slice(0, 8)}`);
  const files = realisticSessionTree({ sessionId, cwd, mainBytes: 20_000, screenshotEvery: 0 });
  await writeSessionTree({ configDir, cwd, sessionId, files });
  return { cwd, captured: await captureSession({ configDir, cwd, sessionId }) };
}

describe("session blobs", () => {
  it("stores a captured session with its agent, returns the latest, and it restores", async () => {
    const { cwd, captured } = await capturedClaudeSession();
    const stored = await app.call("/requests/req-1/session-blobs", { key, json: toTransport(captured) });
    expect(stored.status).toBe(201);
    expect(await stored.json()).toMatchObject({
      requestId: "req-1",
      sessionId: captured.sessionId,
      agentType: "claude-code",
      codec: "brotli",
      rawSizeBytes: captured.rawSizeBytes,
    });
    const latest = await app.call("/requests/req-1/session-blobs/latest", { key });
    expect(latest.status).toBe(200);
    const body = await latest.json();
    expect(body).toMatchObject({ ...toTransport(captured), agentType: "claude-code" });
    const restored = await restoreSession(fromTransport(body), { configDir: join(base, "fresh"), cwd });
    expect(restored.files).toEqual(captured.manifest.files);
  });

  it("tells what is stored of a session id, without the blob: agent, sizes, expiry", async () => {
    const sample = sampleSessionBlob({ sessionId: "ses_meta_1", agent: "opencode" });
    await app.call("/requests/req-meta/session-blobs", { key, json: toTransport(sample) });
    const response = await app.call("/session-blobs/ses_meta_1", { key });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      sessionId: "ses_meta_1",
      requestId: "req-meta",
      agentType: "opencode",
      codec: "gzip",
      blobSizeBytes: sample.blob.byteLength,
      rawSizeBytes: sample.rawSizeBytes,
    });
    expect(body.sessionBlob).toBeUndefined();
    // Another tenant's session, or none, is simply not there.
    const other = await app.keyFor({ kind: "user", id: "someone-else" });
    expect((await app.call("/session-blobs/ses_meta_1", { key: other })).status).toBe(404);
    expect((await app.call("/session-blobs/ses_never", { key })).status).toBe(404);
    expect((await app.call("/session-blobs/..%2Fx", { key })).status).toBe(400);
  });

  it("records and returns the agent type of Codex and OpenCode sessions", async () => {
    for (const agent of ["codex", "opencode"] as const) {
      const sample = sampleSessionBlob({ sessionId: `ses_${agent}_1`, agent });
      const stored = await app.call(`/requests/req-${agent}/session-blobs`, {
        key,
        json: toTransport(sample),
      });
      expect(stored.status).toBe(201);
      expect(await stored.json()).toMatchObject({ agentType: agent });
      const latest = await (await app.call(`/requests/req-${agent}/session-blobs/latest`, { key })).json();
      expect(latest).toMatchObject({ agentType: agent, sessionId: `ses_${agent}_1` });
    }
  });

  it("accepts the design document's own form, { sessionId, sessionBlob }: one gzipped JSONL transcript", async () => {
    const sessionId = randomUUID();
    const transcript = `${JSON.stringify({ type: "user", sessionId, message: { role: "user", content: "hi" } })}\n`;
    const stored = await app.call("/requests/req-doc/session-blobs", {
      key,
      json: { sessionId, sessionBlob: gzipSync(transcript).toString("base64") },
    });
    expect(stored.status).toBe(201);
    expect(await stored.json()).toMatchObject({
      agentType: "claude-code",
      codec: "gzip",
      rawSizeBytes: Buffer.byteLength(transcript),
    });
    const latest = await (await app.call("/requests/req-doc/session-blobs/latest", { key })).json();
    const cwd = join(base, "doc-work");
    await mkdir(cwd);
    const restored = await restoreSession(fromTransport(latest), {
      configDir: join(base, "doc-config"),
      cwd,
    });
    expect(await readFile(restored.transcriptPath!, "utf8")).toBe(transcript);
  });

  it.each([
    [
      "junk bytes claiming 999999999 raw bytes",
      () => ({ ...good(), sessionBlob: junk(), sessionRawSizeBytes: 999_999_999 }),
      413,
      "TOO_LARGE",
    ],
    ["junk bytes labelled gzip", () => ({ ...good(), sessionBlob: junk() }), 422, "INTEGRITY"],
    [
      "junk bytes in the document's form",
      () => ({ sessionId: randomUUID(), sessionBlob: junk() }),
      422,
      "INTEGRITY",
    ],
    [
      "a raw size that does not match",
      () => ({ ...good(), sessionRawSizeBytes: good().sessionRawSizeBytes + 1 }),
      422,
      "INTEGRITY",
    ],
    [
      "gzip of text that is not JSONL",
      () => ({ sessionId: randomUUID(), sessionBlob: gzipSync("plain text").toString("base64") }),
      400,
      "INVALID_INPUT",
    ],
    ["a Claude Code blob stored as Codex's", () => ({ ...good(), agentType: "codex" }), 400, "INVALID_INPUT"],
    ["an unknown agent type", () => ({ ...good(), agentType: "aider" }), 400, "INVALID_INPUT"],
    ["an unknown codec", () => ({ ...good(), sessionCodec: "lz4" }), 400, "INVALID_INPUT"],
    ["a session id with a path in it", () => ({ ...good(), sessionId: "../x" }), 400, "INVALID_INPUT"],
    ["a blob that is not base64", () => ({ ...good(), sessionBlob: "%%%" }), 400, "INVALID_INPUT"],
  ])("refuses %s when it is stored, never at the follow-up run", async (_why, body, status, code) => {
    const response = await app.call("/requests/req-2/session-blobs", { key, json: body() });
    expect(response.status).toBe(status);
    expect(await errorCode(response)).toBe(code);
    expect((await app.call("/requests/req-2/session-blobs/latest", { key })).status).toBe(404);
  });

  it("refuses hostile request ids and answers NOT_FOUND for an unknown request", async () => {
    for (const requestId of ["..", "a%00b", "%2e%2e"]) {
      const response = await app.call(`/requests/${requestId}/session-blobs`, { key, json: good() });
      expect([400, 404]).toContain(response.status);
    }
    const missing = await app.call("/requests/nobody/session-blobs/latest", { key });
    expect(missing.status).toBe(404);
    expect(await errorCode(missing)).toBe("NOT_FOUND");
  });

  it("deletes a request's sessions (at once: the test app's trash days are 0); a request with none is NOT_FOUND", async () => {
    const response = await app.call("/requests/req-1/session-blobs", { key, method: "DELETE" });
    expect(await response.json()).toEqual({ requestId: "req-1", deleted: 1 });
    expect((await app.call("/requests/req-1/session-blobs/latest", { key })).status).toBe(404);
    const again = await app.call("/requests/req-1/session-blobs", { key, method: "DELETE" });
    expect(again.status).toBe(404);
    expect(await errorCode(again)).toBe("NOT_FOUND");
  });

  it("takes and gives the raw form: the blob as the body, the rest in x-stowage-* headers", async () => {
    const { cwd, captured } = await capturedClaudeSession();
    const stored = await app.call("/requests/req-raw/session-blobs", {
      key,
      body: captured.blob,
      headers: {
        "content-type": "application/octet-stream",
        "x-stowage-session-id": captured.sessionId,
        "x-stowage-session-codec": captured.codec,
        "x-stowage-session-raw-size-bytes": String(captured.rawSizeBytes),
        "x-stowage-agent-type": "claude-code",
      },
    });
    expect(stored.status, await stored.clone().text()).toBe(201);
    expect(await stored.json()).toMatchObject({
      sessionId: captured.sessionId,
      rawSizeBytes: captured.rawSizeBytes,
    });
    const latest = await app.call("/requests/req-raw/session-blobs/latest?format=raw", { key });
    expect(latest.status).toBe(200);
    expect(latest.headers.get("content-type")).toBe("application/octet-stream");
    expect(latest.headers.get("x-stowage-session-id")).toBe(captured.sessionId);
    expect(latest.headers.get("x-stowage-session-codec")).toBe(captured.codec);
    expect(latest.headers.get("x-stowage-session-raw-size-bytes")).toBe(String(captured.rawSizeBytes));
    expect(latest.headers.get("x-stowage-agent-type")).toBe("claude-code");
    expect(latest.headers.get("x-stowage-request-id")).toBe("req-raw");
    expect(Date.parse(latest.headers.get("x-stowage-expires-at")!)).toBeGreaterThan(Date.now());
    // The archive as it was sent, assembled from the chunks the server kept: the same files, each
    // checked against its sha256 (the compressed bytes need not be the same).
    const blob = new Uint8Array(await latest.arrayBuffer());
    expect(latest.headers.get("content-length")).toBe(String(blob.byteLength));
    const restored = await restoreSession(
      { sessionId: captured.sessionId, codec: captured.codec, blob, rawSizeBytes: captured.rawSizeBytes },
      { configDir: join(base, "fresh-raw"), cwd },
    );
    expect(restored.files).toEqual(captured.manifest.files);
  });

  it.each([
    ["no raw size", { "x-stowage-session-id": "raw-1" }, "INVALID_INPUT"],
    [
      "a raw size that is no number",
      { "x-stowage-session-id": "raw-1", "x-stowage-session-raw-size-bytes": "-1" },
      "INVALID_INPUT",
    ],
    [
      "a hostile session id",
      { "x-stowage-session-id": "../x", "x-stowage-session-raw-size-bytes": "600" },
      "INVALID_INPUT",
    ],
    [
      "an unknown codec",
      {
        "x-stowage-session-id": "raw-1",
        "x-stowage-session-raw-size-bytes": "600",
        "x-stowage-session-codec": "lz4",
      },
      "INVALID_INPUT",
    ],
  ])("refuses a raw form with %s, storing nothing", async (_why, headers, code) => {
    const response = await app.call("/requests/req-raw-bad/session-blobs", {
      key,
      body: gzipSync(randomBytes(600)),
      headers: { "content-type": "application/octet-stream", ...headers },
    });
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe(code);
    expect((await app.call("/requests/req-raw-bad/session-blobs/latest", { key })).status).toBe(404);
  });

  it("refuses a gzip bomb that records a small raw size once it passes that size", async () => {
    // 64 MiB of zeros, 64 KiB gzipped, posted as a 100-byte transcript: refused at byte 101 of
    // the decompression (INTEGRITY), not after the server inflated it to its 256 MiB limit.
    const response = await app.call("/requests/req-bomb/session-blobs", {
      key,
      body: gzipSync(Buffer.alloc(64 * 1024 * 1024)),
      headers: {
        "content-type": "application/octet-stream",
        "x-stowage-session-id": "bomb-1",
        "x-stowage-session-raw-size-bytes": "100",
      },
    });
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ code: "INTEGRITY", reason: "RAW_SIZE_MISMATCH" });
    expect((await app.call("/requests/req-bomb/session-blobs/latest", { key })).status).toBe(404);
  });

  it("answers the JSON form only up to the JSON body limit: larger blobs come raw", async () => {
    const small = await startTestApp({ STOWAGE_BODY_LIMIT_MB: String(64 / 1024) });
    try {
      const smallKey = await small.keyFor({ kind: "user", id: "tester" });
      // A transcript line of random base64: gzipped still over the 64 KiB JSON limit.
      const raw = Buffer.from(
        `${JSON.stringify({ type: "user", content: randomBytes(100 * 1024).toString("base64") })}\n`,
      );
      const blob = gzipSync(raw);
      const stored = await small.call("/requests/big/session-blobs", {
        key: smallKey,
        body: blob,
        headers: {
          "content-type": "application/octet-stream",
          "x-stowage-session-id": "big-1",
          "x-stowage-session-raw-size-bytes": String(raw.byteLength),
        },
      });
      expect(stored.status, await stored.clone().text()).toBe(201);
      const json = await small.call("/requests/big/session-blobs/latest", { key: smallKey });
      expect(json.status).toBe(413);
      expect(await json.json()).toMatchObject({ code: "TOO_LARGE", reason: "USE_RAW_FORM" });
      // A refused read is no restore; the raw one is.
      const activity = () =>
        small.call("/requests/big/session-blobs/activity", { key: smallKey }).then((r) => r.json());
      expect(await activity()).toMatchObject({
        lastCapture: { sessionId: "big-1", fileCount: 1 },
        lastRestore: null,
      });
      const rawForm = await small.call("/requests/big/session-blobs/latest?format=raw", { key: smallKey });
      expect(new Uint8Array(await rawForm.arrayBuffer())).toEqual(new Uint8Array(blob));
      expect(await activity()).toMatchObject({
        lastRestore: { sessionId: "big-1", rawBytes: raw.byteLength },
      });
    } finally {
      await small.close();
    }
  });

  it("requires a key", async () => {
    expect((await app.call("/requests/req-1/session-blobs/latest")).status).toBe(401);
  });
});

describe("session blob TTL", () => {
  it("stops returning a session once it expires", async () => {
    const short = await startTestApp({ STOWAGE_SESSION_TTL_DAYS: String(1 / 86_400) }); // one second
    try {
      const shortKey = await short.keyFor({ kind: "user", id: "ttl" });
      expect((await short.call("/requests/ttl/session-blobs", { key: shortKey, json: good() })).status).toBe(
        201,
      );
      expect((await short.call("/requests/ttl/session-blobs/latest", { key: shortKey })).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect((await short.call("/requests/ttl/session-blobs/latest", { key: shortKey })).status).toBe(404);
      expect(await short.server.services.sessionBlobs.deleteExpired()).toBe(1);
    } finally {
      await short.close();
    }
  });
});
