// Issue 29 through the app: a session a container sends is kept as chunks in its principal's blobs
// (a follow-up stores only what is new), served back in the design document's wire format, restored
// byte for byte, listed with both sizes, on every backend the app runs on. Real transcripts.
import { createHash, randomUUID } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { collectGarbage } from "@stowage/blob-store";
import { HOSTILE_REFS, integrationEnv } from "@stowage/core/testing";
import {
  type CapturedSession,
  captureSession,
  claudeSessionLocation,
  decompressBounded,
  fromTransport,
  restoreSession,
  toTransport,
} from "@stowage/sessions";
import { encodePng, type RealRecord, realTranscripts, s3TestEnv, tempDirectory } from "@stowage/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { captureClaude, captureLocalChunked, withChunkRef } from "./support/chunked-captures.js";
import { errorCode, startTestApp, type TestApp } from "./support/test-app.js";

const real = realTranscripts("chunked session blobs through the app");
const postgres = integrationEnv("chunked session blobs on PostgreSQL", ["DATABASE_URL"]);
const s3 = s3TestEnv("chunked session blobs on Ceph RGW");

/** A real Claude Code 2.0.76 transcript of 1.4 MB. */
const CLAUDE = "claude-code/session-3fe1b6bc.jsonl";
const CODEX = "codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const jsonl = (records: readonly RealRecord[]) => `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;

/** A real PNG, different for every seed. */
const png = (seed: number) =>
  encodePng(160, 100, (x, y) => ((x * seed + y) % 23 < 11 ? [seed % 256, 40, 90] : [250, 250, 250]));

/**
 * The transcript's records with a PNG in every seventh tool result, as Claude Code's `Read` writes
 * one: an `image` block in the result and its copy in `toolUseResult.file.base64` (its public shape).
 */
function withReadImages(records: RealRecord[]): RealRecord[] {
  let results = 0;
  for (const record of records) {
    const content = record.message?.content;
    if (record.type !== "user" || !Array.isArray(content) || content[0]?.type !== "tool_result") continue;
    if (results++ % 7 !== 0) continue;
    const base64 = png(results).toString("base64");
    content[0].content = [
      { type: "image", source: { type: "base64", data: base64, media_type: "image/png" } },
    ];
    record.toolUseResult = {
      type: "image",
      file: { base64, type: "image/png", originalSize: base64.length },
    };
  }
  return records;
}

/** Each file of a restore, by path, with its sha256, read from disk. */
async function restoredHashes(directory: string, files: readonly { path: string }[]) {
  const hashes = new Map<string, string>();
  for (const { path } of files) hashes.set(path, sha256(await readFile(join(directory, path))));
  return hashes;
}

interface Stored {
  storedBytes: number;
  rawSizeBytes: number;
  blobSizeBytes: number;
}

const BACKENDS = [
  { name: "the file system and embedded PGlite (default)", env: {}, ready: true },
  { name: "PostgreSQL", env: postgres.values, ready: postgres.ready },
  { name: "Ceph RGW (S3) for blobs", env: s3.values, ready: s3.ready },
];

describe.skipIf(!real.present).each(BACKENDS)("chunked session blobs on $name", ({ env, ready }) => {
  let app: TestApp;
  let alice: string;
  let bob: string;
  let base: string;
  const requestId = `req-${randomUUID()}`;
  const records = real.present ? withReadImages(real.records(CLAUDE)) : [];
  const sessionId = records.find((record) => typeof record.sessionId === "string")?.sessionId as string;
  /** The session's transcript as the agent wrote it at the follow-up, and at the first capture: its lines up to 90% of its bytes. */
  const followUp = Buffer.from(jsonl(records));
  const first = followUp.subarray(0, followUp.lastIndexOf("\n", Math.floor(followUp.byteLength * 0.9)) + 1);

  beforeAll(async () => {
    if (!ready) return;
    app = await startTestApp(env);
    const suffix = randomUUID().slice(0, 8);
    alice = await app.keyFor({ kind: "user", id: `alice-${suffix}` });
    bob = await app.keyFor({ kind: "user", id: `bob-${suffix}` });
    base = await tempDirectory("stowage-chunked-app-");
  });
  afterAll(() => app?.close());

  /** The transcript written where Claude Code keeps it, and captured as a container would. */
  async function capture(bytes: Uint8Array): Promise<CapturedSession> {
    const configDir = join(base, "container", ".claude");
    const cwd = join(base, "workspace");
    await mkdir(cwd, { recursive: true });
    const location = await claudeSessionLocation({ configDir, cwd, sessionId });
    await mkdir(dirname(location.transcriptPath), { recursive: true });
    await writeFile(location.transcriptPath, bytes);
    return captureSession({ configDir, cwd, sessionId });
  }

  it.skipIf(!ready)(
    "stores a real session as chunks, lists both sizes, serves it back and restores it byte for byte; a follow-up stores only what is new",
    async () => {
      // The first run's session in the design document's JSON form (base64 in sessionBlob).
      const firstCapture = await capture(first);
      const posted = await app.call(`/requests/${requestId}/session-blobs`, {
        key: alice,
        json: toTransport(firstCapture),
      });
      expect(posted.status, await posted.clone().text()).toBe(201);
      const firstStored = (await posted.json()) as Stored;
      expect(firstStored.rawSizeBytes).toBe(firstCapture.rawSizeBytes);
      // Chunks compressed one by one cost more than one archive (1.75× here); follow-ups win it back.
      expect(firstStored.storedBytes).toBeGreaterThan(0);
      expect(firstStored.storedBytes).toBeLessThan(firstCapture.blob.byteLength * 2);

      // The follow-up run's session (the same, about 11% longer) in the raw form.
      const followCapture = await capture(followUp);
      const rawPost = await app.call(`/requests/${requestId}/session-blobs`, {
        key: alice,
        body: followCapture.blob,
        headers: {
          "content-type": "application/octet-stream",
          "x-stowage-session-id": sessionId,
          "x-stowage-session-codec": followCapture.codec,
          "x-stowage-session-raw-size-bytes": String(followCapture.rawSizeBytes),
          "x-stowage-agent-type": "claude-code",
        },
      });
      expect(rawPost.status, await rawPost.clone().text()).toBe(201);
      const followStored = (await rawPost.json()) as Stored;
      // Only what is new: a fraction of the first capture, and of the archive sent.
      expect(followStored.storedBytes).toBeLessThan(firstStored.storedBytes / 3);
      expect(followStored.storedBytes).toBeLessThan(followCapture.blob.byteLength / 3);

      const listed = (await (await app.call("/session-blobs", { key: alice })).json()) as {
        sessions: (Stored & { sessionId: string })[];
      };
      expect(listed.sessions).toEqual([
        expect.objectContaining({
          sessionId,
          rawSizeBytes: followCapture.rawSizeBytes,
          storedBytes: followStored.storedBytes,
        }),
      ]);
      const meta = await (await app.call(`/session-blobs/${sessionId}`, { key: alice })).json();
      expect(meta).toMatchObject({
        rawSizeBytes: followCapture.rawSizeBytes,
        storedBytes: followStored.storedBytes,
      });

      // Served back in the wire format it came in, JSON and raw, and restored byte for byte.
      const expected = new Map([[`${sessionId}.jsonl`, sha256(followUp)]]);
      const json = await app.call(`/requests/${requestId}/session-blobs/latest`, { key: alice });
      expect(json.status).toBe(200);
      const raw = await app.call(`/requests/${requestId}/session-blobs/latest?format=raw`, { key: alice });
      expect(raw.status).toBe(200);
      const rawBlob = new Uint8Array(await raw.arrayBuffer());
      for (const [name, archive] of [
        ["json", fromTransport(await json.json())],
        [
          "raw",
          {
            sessionId,
            codec: raw.headers.get("x-stowage-session-codec") as "brotli",
            blob: rawBlob,
            rawSizeBytes: Number(raw.headers.get("x-stowage-session-raw-size-bytes")),
          },
        ],
      ] as const) {
        const restored = await restoreSession(archive, {
          configDir: join(base, `restored-${name}`, ".claude"),
          cwd: join(base, "workspace"),
        });
        expect(await restoredHashes(restored.directory!, restored.files)).toEqual(expected);
      }

      // The viewer reads it from the chunks too: the file as the agent wrote it.
      const outline = await app.call(`/session-blobs/${sessionId}/transcripts`, { key: alice });
      expect(outline.status).toBe(200);
      expect(await outline.json()).toMatchObject({ storedBytes: followStored.storedBytes });
      const file = await app.call(
        `/session-blobs/${sessionId}/files?path=${encodeURIComponent(`${sessionId}.jsonl`)}`,
        { key: alice },
      );
      expect(sha256(new Uint8Array(await file.arrayBuffer()))).toBe(sha256(followUp));

      // Another principal finds nothing of it.
      for (const path of [
        `/requests/${requestId}/session-blobs/latest`,
        `/requests/${requestId}/session-blobs/latest?format=raw`,
        `/session-blobs/${sessionId}`,
        `/session-blobs/${sessionId}/transcripts`,
      ]) {
        const response = await app.call(path, { key: bob });
        expect(response.status, path).toBe(404);
      }
      const bobs = (await (await app.call("/session-blobs", { key: bob })).json()) as { sessions: unknown[] };
      expect(bobs.sessions).toEqual([]);
    },
  );

  it.skipIf(!ready)(
    "stores a real Codex rollout with pasted images and restores it byte for byte",
    async () => {
      const rollout = real.records(CODEX);
      for (const [index, event] of rollout.filter((r) => r.payload?.type === "user_message").entries()) {
        event.payload.images = [`data:image/png;base64,${png(300 + index).toString("base64")}`];
      }
      const codexId = rollout[0]!.payload.id as string;
      const codexHome = join(base, ".codex");
      const path = `2026/05/11/${CODEX.slice("codex/".length)}`;
      const bytes = Buffer.from(jsonl(rollout));
      await mkdir(dirname(join(codexHome, "sessions", path)), { recursive: true });
      await writeFile(join(codexHome, "sessions", path), bytes);
      const captured = await captureSession({ agent: "codex", codexHome, sessionId: codexId });
      const codexRequest = `req-codex-${randomUUID()}`;
      const posted = await app.call(`/requests/${codexRequest}/session-blobs`, {
        key: alice,
        json: toTransport(captured),
      });
      expect(posted.status, await posted.clone().text()).toBe(201);
      const latest = await app.call(`/requests/${codexRequest}/session-blobs/latest`, { key: alice });
      const restored = await restoreSession(fromTransport(await latest.json()), {
        codexHome: join(base, ".codex-restored"),
      });
      expect(restored.files.map((file) => file.path)).toEqual([path]);
      expect(sha256(await readFile(join(base, ".codex-restored", "sessions", path)))).toBe(sha256(bytes));
    },
  );
});

describe("chunked session blobs: what a client may not make the server read", () => {
  let app: TestApp;
  let alice: string;
  let bob: string;
  let base: string;

  beforeAll(async () => {
    app = await startTestApp();
    alice = await app.keyFor({ kind: "user", id: "alice" });
    bob = await app.keyFor({ kind: "user", id: "bob" });
    base = await tempDirectory("stowage-chunked-hostile-");
  });
  afterAll(() => app.close());

  it("refuses an archive already kept as chunks from a client: its refs name chunks the server never checked", async () => {
    const chunked = await captureLocalChunked(base);
    for (const request of [
      { json: toTransport(chunked) },
      {
        body: chunked.blob,
        headers: {
          "content-type": "application/octet-stream",
          "x-stowage-session-id": chunked.sessionId,
          "x-stowage-session-codec": chunked.codec,
          "x-stowage-session-raw-size-bytes": String(chunked.rawSizeBytes),
        },
      },
    ]) {
      const response = await app.call("/requests/req-client-chunked/session-blobs", {
        key: alice,
        ...request,
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ code: "INVALID_INPUT", reason: "CHUNKED_BLOB" });
    }
    expect((await app.call("/requests/req-client-chunked/session-blobs/latest", { key: alice })).status).toBe(
      404,
    );
  });

  it("refuses a chunk ref that is a path or no ref at all, wherever it comes from", async () => {
    const chunked = await captureLocalChunked(base);
    const refs: [string, unknown][] = [
      ...HOSTILE_REFS,
      ["encoded traversal", "blob:sha256:..%2F..%2Fx"],
      ["absolute path", "/etc/passwd"],
    ];
    for (const [, ref] of refs) {
      const hostile = await withChunkRef(chunked, ref);
      const response = await app.call("/requests/req-traversal/session-blobs", {
        key: alice,
        json: toTransport(hostile),
      });
      expect(response.status).toBe(400);
      expect(await errorCode(response)).toBe("INVALID_INPUT");
      // Nor does the repository take such a row from anyone else.
      await expect(
        app.server.services.sessionBlobs.create({
          ...hostile,
          owner: "user:alice",
          requestId: "req-traversal",
          agentType: "claude-code",
        }),
      ).rejects.toMatchObject({ code: "INVALID_INPUT", reason: "BAD_MANIFEST" });
    }
  });

  it("a row naming another owner's chunks reads as their absence (INTEGRITY, MISSING_BLOB), never as the bytes", async () => {
    const captured = await captureClaude(base);
    const posted = await app.call("/requests/req-alice/session-blobs", {
      key: alice,
      json: toTransport(captured),
    });
    expect(posted.status).toBe(201);
    const { sessionBlobs } = app.server.services;
    const alices = await sessionBlobs.getLatestForRequest("user:alice", "req-alice");
    // A row written past the API (a tampered database): alice's manifest as bob's.
    await sessionBlobs.create({ ...alices!, owner: "user:bob", requestId: "req-stolen" });
    for (const path of [
      "/requests/req-stolen/session-blobs/latest",
      "/requests/req-stolen/session-blobs/latest?format=raw",
      `/session-blobs/${captured.sessionId}/transcripts`,
      `/session-blobs/${captured.sessionId}/files?path=${encodeURIComponent(`${captured.sessionId}.jsonl`)}`,
    ]) {
      const response = await app.call(path, { key: bob });
      expect(response.status, path).toBe(422);
      const body = (await response.json()) as { code: string; reason: string; details: { ref: string } };
      expect(body).toMatchObject({ code: "INTEGRITY", reason: "MISSING_BLOB" });
      expect(body.details.ref).toMatch(/^blob:sha256:[0-9a-f]{64}$/);
    }
    // Alice still reads hers.
    expect((await app.call("/requests/req-alice/session-blobs/latest", { key: alice })).status).toBe(200);
  });

  /** The hashes a stored row's chunked manifest names, read from the row as garbage collection reads it. */
  async function chunkHashesOf(owner: string, requestId: string): Promise<string[]> {
    const row = await app.server.services.sessionBlobs.getLatestForRequest(owner, requestId);
    if (!row) return [];
    const parts: Uint8Array[] = [];
    for await (const part of decompressBounded(row!.blob, row!.codec, { maxBytes: row!.rawSizeBytes }))
      parts.push(part);
    const text = Buffer.concat(parts).toString("utf8");
    return [...new Set([...text.matchAll(/blob:sha256:([0-9a-f]{64})/g)].map((match) => match[1]!))];
  }

  it("garbage collection keeps the chunks of live captures and releases those of a deleted or expired one", async () => {
    const { services } = app.server;
    const collect = () =>
      collectGarbage({
        blobs: services.blobs,
        roots: services.stowage.blobRoots(),
        ownerMarks: services.stowage.ownerMarks,
        graceMs: 0,
        timestampSlackMs: 0,
      });
    const post = async (requestId: string) => {
      const captured = await captureClaude(base);
      const response = await app.call(`/requests/${requestId}/session-blobs`, {
        key: alice,
        json: toTransport(captured),
      });
      expect(response.status).toBe(201);
      return { captured, hashes: await chunkHashesOf("user:alice", requestId) };
    };
    const deleted = await post("req-gc-deleted");
    const expiring = await post("req-gc-expiring");
    const kept = await post("req-gc-kept");
    for (const stored of [deleted, expiring, kept]) expect(stored.hashes.length).toBeGreaterThan(2);

    await collect();
    for (const { hashes } of [deleted, expiring, kept])
      for (const hash of hashes) expect(await services.blobs.has(hash)).toBe(true);

    // One session deleted, another's row expiring (stored again with an expiry a moment away).
    const deletedId = deleted.captured.sessionId;
    expect((await app.call("/agents/sessions", { key: alice, json: { sessionId: deletedId } })).status).toBe(
      201,
    );
    expect((await app.call(`/agents/sessions/${deletedId}`, { key: alice, method: "DELETE" })).status).toBe(
      200,
    );
    const row = await services.sessionBlobs.getLatestForRequest("user:alice", "req-gc-expiring");
    await services.sessionBlobs.create({ ...row!, expiresAt: new Date(Date.now() + 300) });
    await new Promise((resolve) => setTimeout(resolve, 400));
    await services.stowage.sweep();
    const report = await collect();
    // What only they held is gone (a file of the same bytes in a live capture is its chunk too).
    const live = new Set([...kept.hashes, ...(await chunkHashesOf("user:alice", "req-alice"))]);
    const released = [...deleted.hashes, ...expiring.hashes].filter((hash) => !live.has(hash));
    expect(released.length).toBeGreaterThan(2);
    for (const hash of released) expect(await services.blobs.has(hash)).toBe(false);
    for (const hash of kept.hashes) expect(await services.blobs.has(hash)).toBe(true);
    // Alice's marks of the released chunks went with them: the same bytes stored again by anyone
    // later are not hers to read; her marks of the kept ones stay.
    expect(report.staleOwnerMarks).toBeGreaterThanOrEqual(released.length);
    const alicesBlobs = services.stowage.ownedBlobs({ kind: "user", id: "alice" });
    for (const hash of released) expect(await alicesBlobs.has(hash)).toBe(false);
    for (const hash of kept.hashes) expect(await alicesBlobs.has(hash)).toBe(true);
    const latest = await app.call("/requests/req-gc-kept/session-blobs/latest?format=raw", { key: alice });
    expect(latest.status).toBe(200);
  });
});

describe("chunked session blobs with STOWAGE_SESSION_BLOB_CHUNKS=off", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ STOWAGE_SESSION_BLOB_CHUNKS: "off" });
  });
  afterAll(() => app.close());

  it("keeps the blob as sent in the row, as document 002's agent_sessions does", async () => {
    const key = await app.keyFor({ kind: "user", id: "plain" });
    const captured = await captureClaude(await tempDirectory("stowage-chunks-off-"));
    const posted = await app.call("/requests/req-plain/session-blobs", { key, json: toTransport(captured) });
    expect(posted.status).toBe(201);
    expect(await posted.json()).toMatchObject({
      blobSizeBytes: captured.blob.byteLength,
      storedBytes: captured.blob.byteLength,
    });
    const row = await app.server.services.sessionBlobs.getLatestForRequest("user:plain", "req-plain");
    expect(Buffer.from(row!.blob).equals(Buffer.from(captured.blob))).toBe(true);
    const latest = await app.call("/requests/req-plain/session-blobs/latest", { key });
    expect(await latest.json()).toMatchObject(toTransport(captured));
  });

  it("refuses a setting that is not a flag", async () => {
    await expect(startTestApp({ STOWAGE_SESSION_BLOB_CHUNKS: "sometimes" })).rejects.toThrow(
      /STOWAGE_SESSION_BLOB_CHUNKS/,
    );
  });
});
