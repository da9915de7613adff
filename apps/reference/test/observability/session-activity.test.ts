// One structured line per capture and per restore, through a real pino logger on the server and
// on the CLI's stderr, with the same fields; the request's last capture and last restore recorded
// in the tenant and answered by GET /requests/:requestId/session-blobs/activity (another
// principal's request is 404), also when the CLI captured and restored in other processes.
import { randomUUID } from "node:crypto";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { toTransport } from "@stowage/sessions";
import { realisticSessionTree, writeSessionTree } from "@stowage/sessions/testing";
import { tempDirectory } from "@stowage/test-support";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.js";
import { type RunningServer, startServer } from "../../src/http/server.js";
import { captureClaude } from "../support/chunked-captures.js";
import { spawnStowage } from "../support/cli.js";
import { seedEmbeddedDatabase } from "../support/seed-embedded-database.js";

interface Line {
  level: number | string;
  msg: string;
  [field: string]: unknown;
}

/** The fields of every capture/restore line and activity entry, and nothing else. */
const FIELDS = ["sessionId", "requestId", "agent", "fileCount", "rawBytes", "storedBytes", "durationMs"];

/** A line's field names, `agentVersion` (there when the stored session records one) apart. */
function fieldNames(line: Line): string[] {
  if ("agentVersion" in line) expect(line.agentVersion).toMatch(/^\d+\.\d+/);
  return Object.keys(line)
    .filter((name) => name !== "agentVersion")
    .sort();
}

/** The entry the activity route answers for a logged line. */
const entryOf = (line: Line, expected: Record<string, unknown>) => ({
  ...expected,
  ...("agentVersion" in line ? { agentVersion: line.agentVersion } : {}),
  durationMs: line.durationMs,
  at: expect.any(String),
});

const base = await tempDirectory("stowage-session-activity-");
afterAll(() => rm(base, { recursive: true, force: true }));

async function serve(dataDir: string, lines: Line[]): Promise<RunningServer> {
  await seedEmbeddedDatabase(dataDir);
  const log = pino({ base: null }, { write: (line: string) => lines.push(JSON.parse(line) as Line) });
  const config = await loadConfig({ STOWAGE_DATA_DIR: dataDir, STOWAGE_PORT: "0" }, dataDir);
  return startServer(config, { log });
}

describe("the server: a capture (POST) and a restore (GET latest)", () => {
  const lines: Line[] = [];
  let server: RunningServer;
  let alice: string;
  let bob: string;
  const call = (path: string, key: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, ...init.headers } });

  beforeAll(async () => {
    server = await serve(join(base, "server"), lines);
    alice = (await server.services.apiKeys.issue({ kind: "user", id: "alice" })).apiKey;
    bob = (await server.services.apiKeys.issue({ kind: "user", id: "bob" })).apiKey;
  });
  afterAll(() => server.close());

  it("logs one line each with the same fields, and answers them as the request's activity", async () => {
    const captured = await captureClaude(join(base, "container"));
    const requestId = `req-${randomUUID()}`;
    const stored = await call(`/requests/${requestId}/session-blobs`, alice, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...toTransport(captured), agentType: "claude-code" }),
    });
    expect(stored.status).toBe(201);
    const record = (await stored.json()) as { rawSizeBytes: number; storedBytes: number };
    const latest = await call(`/requests/${requestId}/session-blobs/latest?format=raw`, alice);
    expect(latest.status).toBe(200);
    await latest.arrayBuffer();

    const [capture, ...moreCaptures] = lines.filter((line) => line.msg === "session captured");
    const [restore, ...moreRestores] = lines.filter((line) => line.msg === "session restored");
    expect(moreCaptures).toEqual([]);
    expect(moreRestores).toEqual([]);
    const expected = {
      level: 30,
      sessionId: captured.sessionId,
      requestId,
      agent: "claude-code",
      fileCount: captured.manifest.files.length,
      rawBytes: record.rawSizeBytes,
      storedBytes: record.storedBytes,
    };
    expect(capture).toMatchObject({ ...expected, httpRequestId: stored.headers.get("x-request-id") });
    expect(restore).toMatchObject({ ...expected, httpRequestId: latest.headers.get("x-request-id") });
    for (const line of [capture!, restore!]) {
      expect(fieldNames(line)).toEqual(["httpRequestId", "level", "msg", "time", ...FIELDS].sort());
      expect(line.durationMs).toBeGreaterThanOrEqual(0);
    }

    const activity = await call(`/requests/${requestId}/session-blobs/activity`, alice);
    expect(activity.status).toBe(200);
    const answered = (await activity.json()) as Record<string, Record<string, unknown>>;
    const { level: _level, ...fields } = expected;
    expect(answered.lastCapture).toEqual(entryOf(capture!, fields));
    expect(answered.lastRestore).toEqual(entryOf(restore!, fields));
    expect(Date.parse(answered.lastRestore!.at as string)).toBeGreaterThanOrEqual(
      Date.parse(answered.lastCapture!.at as string),
    );

    // Another principal's request, and a request nothing happened to, look the same: 404.
    for (const [key, id] of [
      [bob, requestId],
      [alice, "never-used"],
    ] as const) {
      const refused = await call(`/requests/${id}/session-blobs/activity`, key);
      expect(refused.status).toBe(404);
      expect(((await refused.json()) as { code: string }).code).toBe("NOT_FOUND");
    }
    // Deleting the request's sessions for good forgets its activity (into the trash, it stays with them).
    expect(
      (await call(`/requests/${requestId}/session-blobs?trashDays=0`, alice, { method: "DELETE" })).status,
    ).toBe(200);
    expect((await call(`/requests/${requestId}/session-blobs/activity`, alice)).status).toBe(404);
  });

  it("a restore line is logged only when there was a session to restore", async () => {
    lines.length = 0;
    expect((await call("/requests/nothing-here/session-blobs/latest", alice)).status).toBe(404);
    expect(lines.filter((line) => line.msg.startsWith("session "))).toEqual([]);
  });
});

describe("the server: a record that cannot be written", () => {
  it("still answers the capture 201 and the restore 200, and logs why the record failed", async () => {
    const lines: Line[] = [];
    const dataDir = join(base, "unrecordable");
    const server = await serve(dataDir, lines);
    try {
      const key = (await server.services.apiKeys.issue({ kind: "user", id: "carol" })).apiKey;
      // A file where the activity records' directory must be: every record fails (CONFLICT).
      await writeFile(join(dataDir, "objects", "session-activity"), "in the way");
      const captured = await captureClaude(join(base, "unrecordable-container"));
      const call = (path: string, init: RequestInit = {}) =>
        fetch(`${server.url}${path}`, {
          ...init,
          headers: { authorization: `Bearer ${key}`, ...init.headers },
        });
      const stored = await call("/requests/req-unrecordable/session-blobs", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(toTransport(captured)),
      });
      expect(stored.status, await stored.clone().text()).toBe(201);
      expect((await call("/requests/req-unrecordable/session-blobs/latest")).status).toBe(200);
      const failures = lines.filter((line) => /could not record the (capture|restore)/.test(line.msg));
      expect(failures.map((line) => line.msg)).toEqual([
        "could not record the capture as the request's last",
        "could not record the restore as the request's last",
      ]);
    } finally {
      await server.close();
    }
  });
});

describe("the CLI: session capture and restore in processes of their own, read by the server", () => {
  it("logs the same fields on stderr (never stdout) and records what the server's activity route answers", async () => {
    const dir = join(base, "cli");
    const env = { STOWAGE_DATA_DIR: join(dir, ".stowage") };
    await seedEmbeddedDatabase(env.STOWAGE_DATA_DIR);
    const sessionId = randomUUID();
    const cwd = join(dir, "workspace");
    const configDir = join(dir, "container", ".claude");
    await mkdir(cwd, { recursive: true });
    const files = realisticSessionTree({ sessionId, cwd, mainBytes: 60_000, screenshotEvery: 0 });
    await writeSessionTree({ configDir, cwd, sessionId, files });

    const where = ["--cwd", cwd, "--user", "cli"];
    const capture = await spawnStowage(
      [
        "session",
        "capture",
        ...where,
        "--config-dir",
        configDir,
        "--session",
        sessionId,
        "--request",
        "r-1",
        "--json",
      ],
      { cwd: dir, env },
    );
    expect(capture.code, capture.stderr).toBe(0);
    const restore = await spawnStowage(
      [
        "session",
        "restore",
        ...where,
        "--config-dir",
        join(dir, "fresh", ".claude"),
        "--request",
        "r-1",
        "--json",
      ],
      { cwd: dir, env },
    );
    expect(restore.code, restore.stderr).toBe(0);
    const lineOf = (stderr: string, msg: string) =>
      stderr
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as Line)
        .find((line) => line.msg === msg);
    const captured = lineOf(capture.stderr, "session captured");
    const restored = lineOf(restore.stderr, "session restored");
    const output = JSON.parse(capture.stdout) as { rawSizeBytes: number; storedBytes: number };
    const expected = {
      sessionId,
      requestId: "r-1",
      agent: "claude-code",
      fileCount: files.size,
      rawBytes: output.rawSizeBytes,
      storedBytes: output.storedBytes,
    };
    expect(captured).toMatchObject({ level: "info", ...expected });
    expect(restored).toMatchObject({ level: "info", ...expected });
    for (const line of [captured!, restored!]) {
      expect(fieldNames(line)).toEqual(["level", "msg", "time", ...FIELDS].sort());
    }
    // stdout stays the command's answer alone.
    expect(capture.stdout).not.toContain("session captured");

    const lines: Line[] = [];
    const server = await serve(env.STOWAGE_DATA_DIR, lines);
    try {
      const key = (await server.services.apiKeys.issue({ kind: "user", id: "cli" })).apiKey;
      const response = await fetch(`${server.url}/requests/r-1/session-blobs/activity`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({
        lastCapture: entryOf(captured!, expected),
        lastRestore: entryOf(restored!, expected),
      });
    } finally {
      await server.close();
    }
  });
});
