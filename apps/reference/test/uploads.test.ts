import { createHash, randomUUID } from "node:crypto";
import { errorResponse, StowageError } from "@stowage/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withoutDataDir } from "../src/http/errors.js";
import { errorCode, startTestApp, type TestApp } from "./support/test-app.js";

const png = new Uint8Array(4000).map((_, i) => (i * 7) % 256);
png.set([0x89, 0x50, 0x4e, 0x47]);
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

describe("artifact uploads over HTTP (embedded signer)", () => {
  let app: TestApp;
  let alice: string;
  let bob: string;
  let acme: string;
  const session = randomUUID();

  beforeAll(async () => {
    // Small limits so that size and quota errors are cheap to reach.
    app = await startTestApp({
      ARTIFACT_MAX_FILE_SIZE_MB: "0.01",
      ARTIFACT_MAX_TOTAL_SIZE_MB: "0.02",
      STOWAGE_BODY_LIMIT_MB: "0.001",
    });
    alice = await app.keyFor({ kind: "user", id: "alice" });
    bob = await app.keyFor({ kind: "user", id: "bob" });
    acme = await app.keyFor({ kind: "org", id: "acme" });
    expect((await app.call("/agents/sessions", { key: alice, json: { sessionId: session } })).status).toBe(
      201,
    );
  });
  afterAll(() => app.close());

  const request = (key: string, overrides: Record<string, unknown> = {}) =>
    app.call("/agents/artifacts/upload-url", {
      key,
      json: {
        agentSessionId: session,
        filename: "shot.png",
        contentType: "image/png",
        fileSize: png.byteLength,
        ...overrides,
      },
    });

  it("answers /healthz without a key", async () => {
    const response = await app.call("/healthz");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      ok: true,
      database: "pglite",
      uploads: "fs-signed",
      shared: "fs",
    });
  });

  it("grants an upload URL that accepts exactly the declared bytes, then lists and downloads them", async () => {
    const response = await request(alice, { sha256: sha256(png) });
    expect(response.status).toBe(200);
    const grant = (await response.json()) as {
      url: string;
      key: string;
      expiresIn: number;
      headers: Record<string, string>;
    };
    expect(grant.expiresIn).toBe(900);
    expect(grant.key).toBe(`sessions/user/alice/${session}/artifacts/shot.png`);
    expect(grant.url.startsWith(`${app.url}/direct/`)).toBe(true);
    expect((await fetch(grant.url, { method: "PUT", headers: grant.headers, body: png })).status).toBe(200);

    const listed = await app.call(`/agents/${session}/artifacts`, { key: alice });
    const { artifacts } = (await listed.json()) as {
      artifacts: { filename: string; size: number; sizeFormatted: string }[];
    };
    expect(artifacts).toEqual([
      expect.objectContaining({ filename: "shot.png", size: png.byteLength, sizeFormatted: "3.9 KiB" }),
    ]);

    const download = (await (
      await app.call(`/agents/${session}/artifacts/shot.png/download`, { key: alice })
    ).json()) as {
      url: string;
      expiresIn: number;
    };
    expect(download.expiresIn).toBe(3600);
    const got = await fetch(download.url);
    expect(got.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await got.arrayBuffer())).toEqual(png);
  });

  it("rejects a body that is not what was signed", async () => {
    const grant = (await (await request(alice, { filename: "other.png" })).json()) as {
      url: string;
      headers: Record<string, string>;
    };
    const wrongType = await fetch(grant.url, {
      method: "PUT",
      headers: { ...grant.headers, "content-type": "image/gif" },
      body: png,
    });
    expect(wrongType.status).toBe(403);
    const { "content-length": _, ...headers } = grant.headers;
    const longer = await fetch(grant.url, {
      method: "PUT",
      headers,
      body: new Uint8Array(png.byteLength + 1),
    });
    expect(longer.status).toBe(403);
    const listed = (await (await app.call(`/agents/${session}/artifacts`, { key: alice })).json()) as {
      artifacts: { filename: string }[];
    };
    expect(listed.artifacts.map((a) => a.filename)).not.toContain("other.png");
  });

  it.each([
    ["no key", undefined, {}, 401, "UNAUTHORIZED"],
    ["a made-up key", "stw_notakey_abc", {}, 401, "UNAUTHORIZED"],
    // Another principal's session and a session that does not exist look the same: 404.
    ["another user", "bob", {}, 404, "NOT_FOUND"],
    ["an org that does not own the session", "acme", {}, 404, "NOT_FOUND"],
    ["an unregistered session", "alice", { agentSessionId: "never-registered" }, 404, "NOT_FOUND"],
    ["a traversal filename", "alice", { filename: "../../x.png" }, 400, "INVALID_INPUT"],
    ["an encoded traversal filename", "alice", { filename: "%2e%2e%2fx.png" }, 400, "INVALID_INPUT"],
    ["a NUL in the filename", "alice", { filename: "a\u0000.png" }, 400, "INVALID_INPUT"],
    [
      "a disallowed extension",
      "alice",
      { filename: "tool.exe", contentType: "application/octet-stream" },
      400,
      "INVALID_INPUT",
    ],
    ["a type that disagrees with the extension", "alice", { contentType: "video/mp4" }, 400, "INVALID_INPUT"],
    ["a file over the size limit", "alice", { fileSize: 20_000 }, 413, "TOO_LARGE"],
    ["a negative size", "alice", { fileSize: -1 }, 400, "INVALID_INPUT"],
    ["a bad sha256", "alice", { sha256: "XYZ" }, 400, "INVALID_INPUT"],
    ["a hostile session id", "alice", { agentSessionId: "../other" }, 400, "INVALID_INPUT"],
  ])("refuses %s", async (_why, who, overrides, status, code) => {
    const key =
      who === undefined
        ? undefined
        : who === "bob"
          ? bob
          : who === "acme"
            ? acme
            : who === "alice"
              ? alice
              : who;
    const response = key
      ? await request(key, overrides)
      : await app.call("/agents/artifacts/upload-url", { json: { agentSessionId: session } });
    expect(response.status).toBe(status);
    expect(await errorCode(response)).toBe(code);
  });

  it("says how to register a session it does not know, the same for another principal's", async () => {
    for (const [key, agentSessionId] of [
      [alice, "never-registered"],
      [bob, session],
    ] as const) {
      const response = await request(key, { agentSessionId });
      expect(response.status).toBe(404);
      const body = (await response.json()) as { error: string; reason: string; details: object };
      expect(body).toMatchObject({
        reason: "SESSION_NOT_FOUND",
        details: { register: "POST /agents/sessions" },
      });
      expect(body.error).toContain("POST /agents/sessions");
      expect(body.error).toContain("stowage session register");
    }
  });

  it("lists the allowed extensions when it refuses a file type", async () => {
    const response = await request(alice, { filename: "tool.exe", contentType: "image/png" });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      reason: "FILE_TYPE_NOT_ALLOWED",
      details: { extension: "exe", allowed: expect.arrayContaining(["png", "log", "json", "html"]) },
    });
  });

  it("refuses uploads past the session quota", async () => {
    const fill = (await (await request(alice, { filename: "fill.png", fileSize: 9000 })).json()) as {
      url: string;
      headers: Record<string, string>;
    };
    expect(
      (await fetch(fill.url, { method: "PUT", headers: fill.headers, body: new Uint8Array(9000) })).status,
    ).toBe(200);
    const response = await request(alice, { filename: "more.png", fileSize: 9000 });
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("QUOTA_EXCEEDED");
  });

  it("another principal's same session id is its own session: nothing of alice's is reachable", async () => {
    // Registering alice's id again is a no-op for her.
    expect((await app.call("/agents/sessions", { key: alice, json: { sessionId: session } })).status).toBe(
      200,
    );
    expect((await app.call(`/agents/${session}/artifacts`, { key: bob })).status).toBe(404);
    expect((await app.call(`/agents/${session}/artifacts/shot.png/download`, { key: acme })).status).toBe(
      404,
    );
    // Bob registering the same id gets a session of his own, empty: the id cannot be squatted.
    expect((await app.call("/agents/sessions", { key: bob, json: { sessionId: session } })).status).toBe(201);
    const his = (await (await app.call(`/agents/${session}/artifacts`, { key: bob })).json()) as {
      artifacts: unknown[];
    };
    expect(his.artifacts).toEqual([]);
    const hers = (await (await app.call(`/agents/${session}/artifacts`, { key: alice })).json()) as {
      artifacts: unknown[];
    };
    expect(hers.artifacts.length).toBeGreaterThan(0);
  });

  it("concurrent registrations of one id answer like one registration and its repeats, for each principal", async () => {
    // Two principals register the same ids at once: to each, its own session, registered once.
    const racers = [
      { kind: "user", id: "racer" },
      { kind: "org", id: "rivals" },
    ] as const;
    const keys = await Promise.all(racers.map((principal) => app.keyFor(principal)));
    for (let round = 0; round < 5; round++) {
      const sessionId = `race-${randomUUID()}`;
      const calls = Array.from({ length: 8 }, (_, i) => i % 2);
      const answers = await Promise.all(
        calls.map(async (racer) => {
          const response = await app.call("/agents/sessions", { key: keys[racer], json: { sessionId } });
          return { racer, status: response.status, body: await response.json() };
        }),
      );
      for (const [racer, principal] of racers.entries()) {
        const theirs = answers.filter((answer) => answer.racer === racer);
        // The README: 201 when it was new, 200 when it was registered already; never 409.
        expect(theirs.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 201]);
        for (const answer of theirs) expect(answer.body).toEqual({ sessionId, owner: principal });
        const tenant = app.server.services.tenant(principal);
        expect(await tenant.registeredSessions.has(sessionId)).toBe(true);
        const files = (await tenant.agentSessions.list()).filter((file) => file.sessionId === sessionId);
        expect(files).toHaveLength(1);
      }
    }
  });

  it.each([
    ["ending in .jsonl (it would own another session's file)", "evil.jsonl"],
    ["with a path", "../evil"],
    ["hidden", ".evil"],
  ])("refuses a session id %s before registering anything", async (_why, sessionId) => {
    const response = await app.call("/agents/sessions", { key: alice, json: { sessionId } });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "INVALID_INPUT", reason: "INVALID_SESSION_ID" });
    // Not registered: no upload URL for it, and nothing in the registry.
    const upload = await request(alice, { agentSessionId: sessionId, filename: "x.png", fileSize: 4 });
    expect([400, 404]).toContain(upload.status);
    const registered: string[] = [];
    for await (const id of app.server.services
      .tenant({ kind: "user", id: "alice" })
      .registeredSessions.list()) {
      registered.push(id);
    }
    expect(registered).toEqual([session]);
  });

  it("deleting the uploads of a session the caller has not registered is NOT_FOUND", async () => {
    const response = await app.call(`/agents/sessions/${randomUUID()}/uploads`, {
      key: bob,
      method: "DELETE",
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ code: "NOT_FOUND", reason: "SESSION_NOT_FOUND" });
  });

  it("the upload API and the signed URLs answer file-system errors without the data directory", async () => {
    const sessionWithBlock = randomUUID();
    await app.call("/agents/sessions", { key: alice, json: { sessionId: sessionWithBlock } });
    const grant = (await (
      await request(alice, { agentSessionId: sessionWithBlock, filename: "a.png", fileSize: 4 })
    ).json()) as { url: string; headers: Record<string, string> };
    // A file where the session's uploads directory should be.
    const { mkdir, writeFile } = await import("node:fs/promises");
    const { join } = await import("node:path");
    const sessionDir = join(app.dataDir, "objects", "sessions", "user", "alice", sessionWithBlock);
    await mkdir(sessionDir, { recursive: true });
    await writeFile(join(sessionDir, "artifacts"), "in the way");
    const put = await fetch(grant.url, { method: "PUT", headers: grant.headers, body: new Uint8Array(4) });
    expect(put.status).toBe(409);
    expect(await put.text()).not.toContain(app.dataDir);
    // The upload API's own answers go through the same redaction (an fs error names its file).
    const leaking = errorResponse(
      new StowageError("CONFLICT", `"${app.dataDir}/objects/sessions" is a file, not a directory`, {
        reason: "NOT_A_DIRECTORY",
        details: { path: `${app.dataDir}/objects/sessions` },
      }),
    );
    const redacted = await withoutDataDir(leaking, app.dataDir);
    expect(redacted.status).toBe(409);
    const body = await redacted.json();
    expect(JSON.stringify(body)).not.toContain(app.dataDir);
    expect(body).toMatchObject({
      code: "CONFLICT",
      reason: "NOT_A_DIRECTORY",
      details: { path: "<data dir>/objects/sessions" },
    });
  });

  it("answers malformed and oversized bodies with JSON errors", async () => {
    const notJson = await app.call("/agents/artifacts/upload-url", {
      key: alice,
      body: "{not json",
      headers: { "content-type": "application/json" },
    });
    expect(notJson.status).toBe(400);
    expect(await errorCode(notJson)).toBe("INVALID_INPUT");
    const huge = await app.call("/agents/artifacts/upload-url", {
      key: alice,
      json: { filename: "x".repeat(5000) },
    });
    expect(huge.status).toBe(413);
    expect(await errorCode(huge)).toBe("TOO_LARGE");
    const missing = await app.call("/no/such/route", { key: alice });
    expect(missing.status).toBe(404);
    expect(await errorCode(missing)).toBe("NOT_FOUND");
  });
});

describe("rate limits", () => {
  it("limits requests per key and answers 429 with retry-after", async () => {
    const app = await startTestApp({ STOWAGE_RATE_LIMIT_PER_MINUTE: "5" });
    try {
      const key = await app.keyFor({ kind: "user", id: "busy" });
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push((await app.call("/sessions", { key })).status);
      expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
      const limited = await app.call("/sessions", { key });
      expect(limited.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(await errorCode(limited)).toBe("RATE_LIMITED");
      // Another key has its own budget.
      const other = await app.keyFor({ kind: "user", id: "calm" });
      expect((await app.call("/sessions", { key: other })).status).toBe(200);
    } finally {
      await app.close();
    }
  });
});
