// The deletion audit as the app serves it: `GET /audit` (the caller's rows only, hostile query
// values refused), `stowage audit`, and the rows a DELETE, a sweep and `stowage blob gc` leave.
import { createHash, randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { compressChunks, toTransport } from "@stowage/sessions";
import { textItem } from "@stowage/thread-items";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseSince } from "../src/cli/audit-command.js";
import { ageFiles } from "./support/age-files.js";
import { stowage as run } from "./support/cli.js";
import { seedEmbeddedDatabase } from "./support/seed-embedded-database.js";
import { errorCode, startTestApp, type TestApp } from "./support/test-app.js";

interface Row {
  kind: string;
  id: string;
  bytes?: number;
  by: string;
  at: string;
  reason: string;
}

let app: TestApp;
let alice: string;
let bob: string;
const keyIdOf = (apiKey: string) => apiKey.slice(4, 16);

async function json<T>(response: Response): Promise<T> {
  expect(response.status, await response.clone().text()).toBeLessThan(300);
  return (await response.json()) as T;
}

beforeAll(async () => {
  app = await startTestApp({ STOWAGE_RATE_LIMIT_PER_MINUTE: "100000" });
  alice = await app.keyFor({ kind: "user", id: "alice" });
  bob = await app.keyFor({ kind: "user", id: "bob" });
});
afterAll(() => app.close());

describe("GET /audit", () => {
  it("a DELETE of a session leaves its rows, by the key that asked; bob's audit holds none of them", async () => {
    const sessionId = randomUUID();
    await json(await app.call("/agents/sessions", { key: alice, json: { sessionId } }));
    await json(
      await app.call(`/threads/${sessionId}/main/items`, { key: alice, json: textItem("alice's note") }),
    );
    await json(await app.call(`/agents/sessions/${sessionId}`, { key: alice, method: "DELETE" }));
    const { rows } = await json<{ rows: Row[] }>(await app.call("/audit", { key: alice }));
    const mine = rows.filter((row) => row.id === sessionId);
    // Registering made its agent session file: that store removed something too.
    expect(mine.map((row) => row.kind)).toEqual(["session", "threads", "agentSessions"]);
    for (const row of mine) expect(row.by).toBe(`key:${keyIdOf(alice)}`);
    const text = await (await app.call("/audit", { key: bob })).text();
    expect(JSON.parse(text)).toEqual({ rows: [], unreadable: 0 });
    expect(text).not.toContain(sessionId);
  });

  it("pages with cursor and limit, and filters with since", async () => {
    for (let i = 0; i < 3; i++) {
      const sessionId = randomUUID();
      await json(await app.call("/agents/sessions", { key: alice, json: { sessionId } }));
      await json(await app.call(`/agents/sessions/${sessionId}`, { key: alice, method: "DELETE" }));
    }
    const all = (await json<{ rows: Row[] }>(await app.call("/audit", { key: alice }))).rows;
    const first = await json<{ rows: Row[]; cursor: string }>(
      await app.call("/audit?limit=2", { key: alice }),
    );
    expect(first.rows).toEqual(all.slice(0, 2));
    const next = await json<{ rows: Row[] }>(
      await app.call(`/audit?limit=2&cursor=${encodeURIComponent(first.cursor)}`, { key: alice }),
    );
    expect(next.rows).toEqual(all.slice(2, 4));
    const future = new Date(Date.now() + 60_000).toISOString();
    expect(
      (await json<{ rows: Row[] }>(await app.call(`/audit?since=${future}`, { key: alice }))).rows,
    ).toEqual([]);
  });

  it("bob given alice's cursor reads nothing of hers: INVALID_INPUT", async () => {
    const first = await json<{ cursor: string }>(await app.call("/audit?limit=1", { key: alice }));
    const response = await app.call(`/audit?cursor=${encodeURIComponent(first.cursor)}`, { key: bob });
    expect(response.status).toBe(400);
    expect(await response.text()).not.toContain("alice's");
  });

  it.each([
    ["since that is no time", "since=yesterday"],
    ["since with a NUL", "since=2026-11-01%00"],
    ["an overlong since", `since=2026-11-01${"0".repeat(100)}`],
    ["a cursor that is garbage", "cursor=%2E%2E%2F%2E%2E"],
    ["an overlong cursor", `cursor=${"a".repeat(5000)}`],
    ["a negative limit", "limit=-1"],
    ["a limit past 1000", "limit=100000"],
    ["a limit that is no number", "limit=ten"],
  ])("refuses %s with INVALID_INPUT", async (_why, query) => {
    const response = await app.call(`/audit?${query}`, { key: alice });
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("INVALID_INPUT");
  });

  it("needs a key", async () => {
    expect((await app.call("/audit")).status).toBe(401);
  });

  it("a DELETE of a session's uploads leaves a row with the bytes removed", async () => {
    const sessionId = randomUUID();
    await json(await app.call("/agents/sessions", { key: alice, json: { sessionId } }));
    const upload = new TextEncoder().encode("alice's notes");
    const grant = await json<{ url: string; headers: Record<string, string> }>(
      await app.call("/agents/artifacts/upload-url", {
        key: alice,
        json: {
          agentSessionId: sessionId,
          filename: "notes.txt",
          contentType: "text/plain",
          fileSize: upload.byteLength,
          sha256: createHash("sha256").update(upload).digest("hex"),
        },
      }),
    );
    expect((await fetch(grant.url, { method: "PUT", headers: grant.headers, body: upload })).ok).toBe(true);
    await json(
      await app.call("/agents/artifacts/complete", {
        key: alice,
        json: { agentSessionId: sessionId, filename: "notes.txt" },
      }),
    );
    await json(await app.call(`/agents/sessions/${sessionId}/uploads`, { key: alice, method: "DELETE" }));
    const rows = (await json<{ rows: Row[] }>(await app.call("/audit?limit=1000", { key: alice }))).rows;
    expect(rows.filter((row) => row.id === sessionId)).toEqual([
      expect.objectContaining({ kind: "uploads", bytes: upload.byteLength, by: `key:${keyIdOf(alice)}` }),
    ]);
  });

  it("a DELETE of a request's stored sessions leaves its row; one that found nothing leaves none", async () => {
    const requestId = `req-${randomUUID().slice(0, 8)}`;
    const raw = new TextEncoder().encode(`${JSON.stringify({ type: "user", content: "hi" })}\n`);
    const blob = await compressChunks("gzip", [raw]);
    await json(
      await app.call(`/requests/${requestId}/session-blobs`, {
        key: alice,
        json: toTransport({ sessionId: randomUUID(), codec: "gzip", blob, rawSizeBytes: raw.byteLength }),
      }),
    );
    await json(await app.call(`/requests/${requestId}/session-blobs`, { key: alice, method: "DELETE" }));
    const other = `req-${randomUUID().slice(0, 8)}`;
    expect(
      (await app.call(`/requests/${other}/session-blobs`, { key: alice, method: "DELETE" })).status,
    ).toBe(404);
    const rows = (await json<{ rows: Row[] }>(await app.call("/audit?limit=1000", { key: alice }))).rows;
    expect(rows.filter((row) => row.id === requestId)).toEqual([
      expect.objectContaining({ kind: "sessionBlobs", by: `key:${keyIdOf(alice)}`, report: { removed: 1 } }),
    ]);
    expect(rows.some((row) => row.id === other)).toBe(false);
  });
});

describe("stowage audit", () => {
  it("lists a principal's rows as the server wrote them, JSON or lines", async () => {
    const env = { STOWAGE_DATA_DIR: app.dataDir };
    const listed = JSON.parse(
      (await run(["audit", "--user", "alice", "--json"], { cwd: app.dataDir, env })).stdout,
    ) as {
      rows: Row[];
    };
    const served = (await json<{ rows: Row[] }>(await app.call("/audit?limit=1000", { key: alice }))).rows;
    expect(listed.rows).toEqual(served);
    const lines = (await run(["audit", "--user", "alice"], { cwd: app.dataDir, env })).stdout;
    expect(lines).toContain(`session  ${served[0]!.id}  by key:${keyIdOf(alice)}`);
    expect(lines).toContain(`${served.length} deletion(s)`);
    expect(
      (await run(["audit", "--user", "nobody", "--since", "7d"], { cwd: app.dataDir, env })).stdout,
    ).toBe("0 deletion(s)\n");
  });

  it("refuses a command line without whose rows, or a hostile principal or since", async () => {
    const env = { STOWAGE_DATA_DIR: app.dataDir };
    await expect(run(["audit"], { cwd: app.dataDir, env })).rejects.toThrow(
      /--user <id>, --org <id> or --deployment/,
    );
    await expect(run(["audit", "--user", "a", "--deployment"], { cwd: app.dataDir, env })).rejects.toThrow();
    await expectStowageError(run(["audit", "--user", "../x"], { cwd: app.dataDir, env }), "INVALID_INPUT");
    expect(() => parseSince("last week")).toThrow(/--since must be/);
    expect(parseSince("2d", Date.parse("2026-11-03T00:00:00Z")).toISOString()).toBe(
      "2026-11-01T00:00:00.000Z",
    );
  });

  it("blob gc leaves a row per deleted blob: an unowned blob in the deployment's audit, by gc", async () => {
    const dir = await mkdtemp(join(tmpdir(), "stowage-audit-gc-"));
    try {
      const env = { STOWAGE_DATA_DIR: join(dir, ".stowage") };
      await seedEmbeddedDatabase(env.STOWAGE_DATA_DIR);
      await writeFile(join(dir, "orphan.txt"), "nobody references me");
      const [put] = JSON.parse(
        (await run(["blob", "put", "orphan.txt", "--json"], { cwd: dir, env })).stdout,
      ) as {
        hash: string;
      }[];
      await ageFiles(join(env.STOWAGE_DATA_DIR, "objects", "blobs"), 1200);
      await run(["blob", "gc", "--grace-hours", "0"], { cwd: dir, env });
      const { rows } = JSON.parse(
        (await run(["audit", "--deployment", "--json"], { cwd: dir, env })).stdout,
      ) as {
        rows: Row[];
      };
      expect(rows).toEqual([expect.objectContaining({ kind: "blobs", id: put!.hash, bytes: 20, by: "gc" })]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
