// Nothing expires unannounced: `GET /expiring`, `PATCH /expiring/:kind/:id` and `stowage expiring`
// on the embedded defaults (stored sessions kept 7 days unless extended, at most 30 days ahead).
import { createHash, randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import { compressChunks, toTransport } from "@stowage/sessions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stowage as run } from "./support/cli.js";
import { errorCode, startTestApp, type TestApp } from "./support/test-app.js";

const DAY_MS = 86_400_000;
let app: TestApp;
let alice: string;
let bob: string;
const sessionId = randomUUID();
const requestId = `req-${randomUUID().slice(0, 8)}`;

interface Expiring {
  kind: string;
  id: string;
  expiresAt: string;
  bytes: number;
  requestId?: string;
}

async function json<T>(response: Response): Promise<T> {
  expect(response.status, await response.clone().text()).toBeLessThan(300);
  return (await response.json()) as T;
}

const patch = (key: string, path: string, body: unknown) =>
  app.call(path, { key, method: "PATCH", json: body });

beforeAll(async () => {
  app = await startTestApp({ STOWAGE_RATE_LIMIT_PER_MINUTE: "100000" });
  alice = await app.keyFor({ kind: "user", id: "alice" });
  bob = await app.keyFor({ kind: "user", id: "bob" });
  const raw = new TextEncoder().encode(`${JSON.stringify({ type: "user", content: "hi" })}\n`);
  const blob = await compressChunks("gzip", [raw]);
  await json(
    await app.call(`/requests/${requestId}/session-blobs`, {
      key: alice,
      json: toTransport({ sessionId, codec: "gzip", blob, rawSizeBytes: raw.byteLength }),
    }),
  );
});
afterAll(() => app.close().catch(() => {}));

describe("GET /expiring", () => {
  it("lists the caller's stored session, due in 7 days, only in a window that reaches it", async () => {
    const { expiring } = await json<{ expiring: Expiring[] }>(
      await app.call("/expiring?within=8d", { key: alice }),
    );
    expect(expiring).toEqual([
      {
        kind: "sessionBlobs",
        id: sessionId,
        expiresAt: expect.any(String),
        bytes: expect.any(Number),
        requestId,
      },
    ]);
    expect(Math.abs(Date.parse(expiring[0]!.expiresAt) - (Date.now() + 7 * DAY_MS))).toBeLessThan(60_000);
    // The listing of stored sessions reports the same expiry.
    const listing = await json<{ sessions: { sessionId: string; expiresAt: string }[] }>(
      await app.call("/session-blobs", { key: alice }),
    );
    expect(listing.sessions.find((s) => s.sessionId === sessionId)?.expiresAt).toBe(expiring[0]!.expiresAt);
    expect(
      (await json<{ expiring: Expiring[] }>(await app.call("/expiring?within=1d", { key: alice }))).expiring,
    ).toEqual([]);
    // The default window is 7 days: the session, due in a little under that, is in it.
    expect(
      (await json<{ expiring: Expiring[] }>(await app.call("/expiring", { key: alice }))).expiring,
    ).toHaveLength(1);
  });

  it("bob's holds nothing of alice's", async () => {
    const text = await (await app.call("/expiring?within=30d", { key: bob })).text();
    expect(JSON.parse(text)).toEqual({ expiring: [] });
    expect(text).not.toContain(sessionId);
  });

  it.each([
    ["a word", "within=soon"],
    ["a negative span", "within=-1d"],
    ["six digits", "within=999999d"],
    ["a unit it does not know", "within=3w"],
    ["a NUL", "within=3d%00"],
  ])("refuses within as %s with INVALID_INPUT", async (_why, query) => {
    const response = await app.call(`/expiring?${query}`, { key: alice });
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("INVALID_INPUT");
  });
});

describe("PATCH /expiring/:kind/:id", () => {
  it("extends the caller's stored session within 30 days, and refuses further with the limit", async () => {
    const later = new Date(Date.now() + 20 * DAY_MS).toISOString();
    expect(
      await json(await patch(alice, `/expiring/sessionBlobs/${sessionId}`, { expiresAt: later })),
    ).toEqual({
      kind: "sessionBlobs",
      id: sessionId,
      expiresAt: later,
      changed: 1,
    });
    const { expiring } = await json<{ expiring: Expiring[] }>(
      await app.call("/expiring?within=21d", { key: alice }),
    );
    expect(expiring[0]!.expiresAt).toBe(later);
    const tooLate = await patch(alice, `/expiring/sessionBlobs/${sessionId}`, {
      expiresAt: new Date(Date.now() + 31 * DAY_MS).toISOString(),
    });
    expect(tooLate.status).toBe(400);
    expect(await tooLate.json()).toMatchObject({
      code: "INVALID_INPUT",
      reason: "EXPIRY_TOO_LATE",
      details: { limitDays: 30 },
    });
  });

  it("bob extending alice's session is 404 and changes nothing", async () => {
    const before = (
      await json<{ expiring: Expiring[] }>(await app.call("/expiring?within=30d", { key: alice }))
    ).expiring;
    const response = await patch(bob, `/expiring/sessionBlobs/${sessionId}`, {
      expiresAt: new Date(Date.now() + 2 * DAY_MS).toISOString(),
    });
    expect(response.status).toBe(404);
    expect(
      (await json<{ expiring: Expiring[] }>(await app.call("/expiring?within=30d", { key: alice }))).expiring,
    ).toEqual(before);
  });

  it.each([
    ["no body", undefined, `/expiring/sessionBlobs/${sessionId}`],
    ["expiresAt that is no time", { expiresAt: "tomorrow" }, `/expiring/sessionBlobs/${sessionId}`],
    ["expiresAt as a number", { expiresAt: 1 }, `/expiring/sessionBlobs/${sessionId}`],
    ["expiresAt in the past", { expiresAt: "2020-01-01T00:00:00Z" }, `/expiring/sessionBlobs/${sessionId}`],
    [
      "an unknown kind",
      { expiresAt: new Date(Date.now() + DAY_MS).toISOString() },
      `/expiring/hotState/${sessionId}`,
    ],
    [
      "an upload (its retention decides)",
      { expiresAt: new Date(Date.now() + DAY_MS).toISOString() },
      "/expiring/uploads/x",
    ],
    [
      "a traversing id",
      { expiresAt: new Date(Date.now() + DAY_MS).toISOString() },
      "/expiring/sessionBlobs/..%2Fx",
    ],
  ])("refuses %s with INVALID_INPUT", async (_why, body, path) => {
    const response =
      body === undefined
        ? await app.call(path, { key: alice, method: "PATCH" })
        : await patch(alice, path, body);
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("INVALID_INPUT");
  });
});

describe("stowage expiring", () => {
  it("lists a principal's stored session from the deployment's data, JSON or lines", async () => {
    // The CLI opens the same embedded database: the server lets it go first.
    await app.server.close();
    const env = { STOWAGE_DATA_DIR: app.dataDir };
    try {
      const listed = JSON.parse(
        (await run(["expiring", "--user", "alice", "--within", "30d", "--json"], { cwd: app.dataDir, env }))
          .stdout,
      ) as { expiring: Expiring[] };
      expect(listed.expiring.map((thing) => [thing.kind, thing.id])).toEqual([["sessionBlobs", sessionId]]);
      const lines = (await run(["expiring", "--user", "bob"], { cwd: app.dataDir, env })).stdout;
      expect(lines).toBe("0 expiring within 168 hours\n");
      await expect(
        run(["expiring", "--user", "alice", "--within", "soon"], { cwd: app.dataDir, env }),
      ).rejects.toThrow(/--within must be a span/);
      await expect(run(["expiring"], { cwd: app.dataDir, env })).rejects.toThrow(/--user <id> or --org <id>/);
    } finally {
      await rm(app.dataDir, { recursive: true, force: true });
    }
  });
});

describe("uploads under STOWAGE_UPLOAD_RETENTION_DAYS", () => {
  it("are listed with their expiresAt (last change plus the retention), and in GET /expiring", async () => {
    const retained = await startTestApp({ STOWAGE_UPLOAD_RETENTION_DAYS: "10" });
    try {
      const key = await retained.keyFor({ kind: "user", id: "carol" });
      const session = randomUUID();
      await json(await retained.call("/agents/sessions", { key, json: { sessionId: session } }));
      const upload = new TextEncoder().encode("carol's notes");
      const grant = await json<{ url: string; headers: Record<string, string> }>(
        await retained.call("/agents/artifacts/upload-url", {
          key,
          json: {
            agentSessionId: session,
            filename: "notes.txt",
            contentType: "text/plain",
            fileSize: upload.byteLength,
            sha256: createHash("sha256").update(upload).digest("hex"),
          },
        }),
      );
      expect((await fetch(grant.url, { method: "PUT", headers: grant.headers, body: upload })).ok).toBe(true);
      await json(
        await retained.call("/agents/artifacts/complete", {
          key,
          json: { agentSessionId: session, filename: "notes.txt" },
        }),
      );
      const listing = await json<{
        artifacts: { filename: string; lastModified: string; expiresAt: string }[];
      }>(await retained.call(`/agents/${session}/artifacts`, { key }));
      const [listed] = listing.artifacts;
      expect(Date.parse(listed!.expiresAt) - Date.parse(listed!.lastModified)).toBe(10 * DAY_MS);
      const { expiring } = await json<{ expiring: Expiring[] }>(
        await retained.call("/expiring?within=11d", { key }),
      );
      expect(expiring).toEqual([
        {
          kind: "uploads",
          id: `${session}/notes.txt`,
          expiresAt: listed!.expiresAt,
          bytes: upload.byteLength,
        },
      ]);
    } finally {
      await retained.close();
    }
  });
});
