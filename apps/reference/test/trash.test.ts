// The trash as the app serves it: DELETE /agents/sessions/:id moves the session there (every route
// of it 404 until restored), GET /trash, POST /trash/:kind/:id/restore, DELETE /trash/:kind/:id,
// the sweeper's purge, `stowage trash`; on the embedded PGlite, and on PostgreSQL and Ceph RGW.
import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile, rm, utimes } from "node:fs/promises";
import { join } from "node:path";
import { integrationEnv } from "@stowage/core/testing";
import { compressChunks, toTransport } from "@stowage/sessions";
import { s3TestEnv } from "@stowage/test-support";
import { textItem } from "@stowage/thread-items";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ageFiles } from "./support/age-files.js";
import { stowage as run } from "./support/cli.js";
import { errorCode, startTestApp, type TestApp } from "./support/test-app.js";

const postgres = integrationEnv("the trash on PostgreSQL", ["DATABASE_URL"]);
const s3 = s3TestEnv("the trash on S3");
const DAY_MS = 24 * 3600 * 1000;
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

interface Trashed {
  kind: string;
  id: string;
  trashedAt: string;
  purgeAfter: string;
  by: string;
  bytes: number;
}

async function json<T>(response: Response): Promise<T> {
  expect(response.status, await response.clone().text()).toBeLessThan(300);
  return (await response.json()) as T;
}

/** A session with a thread item, a stored session, an upload (11 bytes) and its capture's activity. */
async function fullSession(app: TestApp, key: string) {
  const sessionId = randomUUID();
  const requestId = `req-${sessionId.slice(0, 8)}`;
  expect((await app.call("/agents/sessions", { key, json: { sessionId } })).status).toBe(201);
  await json(await app.call(`/threads/${sessionId}/main/items`, { key, json: textItem("step one") }));
  const raw = new TextEncoder().encode(`${JSON.stringify({ type: "user", message: "hi" })}\n`);
  const blob = await compressChunks("gzip", [raw]);
  await json(
    await app.call(`/requests/${requestId}/session-blobs`, {
      key,
      json: toTransport({ sessionId, codec: "gzip", blob, rawSizeBytes: raw.byteLength }),
    }),
  );
  const body = new TextEncoder().encode("hello world");
  const grant = await json<{ url: string; headers: Record<string, string> }>(
    await app.call("/agents/artifacts/upload-url", {
      key,
      json: {
        agentSessionId: sessionId,
        filename: "notes.txt",
        contentType: "text/plain",
        fileSize: body.byteLength,
        sha256: sha256(body),
      },
    }),
  );
  expect((await fetch(grant.url, { method: "PUT", headers: grant.headers, body })).status).toBe(200);
  return { sessionId, requestId };
}

/** What the session's routes answer: status and body of each. */
async function reads(
  app: TestApp,
  key: string,
  { sessionId, requestId }: { sessionId: string; requestId: string },
) {
  const paths = [
    `/threads/${sessionId}/main`,
    `/session-blobs/${sessionId}`,
    `/requests/${requestId}/session-blobs/latest?format=raw`,
    `/sessions/${sessionId}`,
    `/agents/${sessionId}/artifacts`,
  ];
  const answers: Record<string, { status: number; body: string }> = {};
  for (const path of paths) {
    const response = await app.call(path, { key });
    const body = await response.text();
    // The listing signs download URLs afresh on every read: compare what they point at.
    answers[path] = { status: response.status, body: body.replace(/"(url|downloadUrl)":"[^"]*"/g, '"$1"') };
  }
  return answers;
}

describe.each([
  ["the embedded PGlite", true, () => ({})],
  [
    "PostgreSQL and Ceph RGW",
    postgres.ready && s3.ready,
    () => ({ DATABASE_URL: postgres.values.DATABASE_URL!, ...s3.values }),
  ],
] as const)("the trash on %s", (name, ready, env) => {
  let app: TestApp;
  let alice: string;
  let bob: string;
  const owner = `trash-${randomUUID().slice(0, 8)}`;
  beforeAll(async () => {
    if (!ready) return;
    // Empty: unset, the deployment's default of 7 days.
    app = await startTestApp({ ...env(), STOWAGE_TRASH_DAYS: "", STOWAGE_RATE_LIMIT_PER_MINUTE: "100000" });
    alice = await app.keyFor({ kind: "user", id: owner });
    bob = await app.keyFor({ kind: "user", id: `${owner}-bob` });
  });
  afterAll(async () => {
    await app?.close();
  });

  it.skipIf(!ready)(
    "DELETE moves a session to the trash: every route 404, bob sees nothing, a restore gives back the same answers",
    async () => {
      const session = await fullSession(app, alice);
      const before = await reads(app, alice, session);
      for (const answer of Object.values(before)) expect(answer.status).toBe(200);
      const startedAt = Date.now();
      const deleted = await json<{ sessionId: string; trash: Trashed }>(
        await app.call(`/agents/sessions/${session.sessionId}`, { key: alice, method: "DELETE" }),
      );
      expect(deleted.trash).toMatchObject({
        kind: "session",
        id: session.sessionId,
        by: expect.stringMatching(/^key:/),
      });
      expect(Date.parse(deleted.trash.purgeAfter) - Date.parse(deleted.trash.trashedAt)).toBe(7 * DAY_MS);
      expect(Date.parse(deleted.trash.trashedAt)).toBeGreaterThanOrEqual(startedAt - 1000);
      // 11 bytes of upload, and the stored session's chunks: more than the upload alone.
      expect(deleted.trash.bytes).toBeGreaterThan(11);
      const listed = await json<{ items: Trashed[]; bytes: number }>(
        await app.call("/trash", { key: alice }),
      );
      expect(listed).toEqual({ items: [deleted.trash], bytes: deleted.trash.bytes });
      expect(await json(await app.call("/trash", { key: bob }))).toEqual({ items: [], bytes: 0 });
      for (const [path, answer] of Object.entries(await reads(app, alice, session))) {
        expect(answer.status, path).toBe(404);
      }
      const uploadsGone = await app.call(`/agents/sessions/${session.sessionId}/uploads`, {
        key: alice,
        method: "DELETE",
      });
      expect(uploadsGone.status).toBe(404);
      const again = await app.call("/agents/sessions", {
        key: alice,
        json: { sessionId: session.sessionId },
      });
      expect([again.status, await errorCode(again)]).toEqual([409, "CONFLICT"]);
      const bobRestores = await app.call(`/trash/session/${session.sessionId}/restore`, {
        key: bob,
        method: "POST",
      });
      expect([bobRestores.status, await errorCode(bobRestores)]).toEqual([404, "NOT_FOUND"]);
      const bobPurges = await app.call(`/trash/session/${session.sessionId}`, { key: bob, method: "DELETE" });
      expect(bobPurges.status).toBe(404);

      const restored = await json<Trashed>(
        await app.call(`/trash/session/${session.sessionId}/restore`, { key: alice, method: "POST" }),
      );
      expect(restored).toEqual(deleted.trash);
      expect(await reads(app, alice, session)).toEqual(before);
      expect(await json(await app.call("/trash", { key: alice }))).toEqual({ items: [], bytes: 0 });
    },
  );

  it.skipIf(!ready)(
    "DELETE /trash/:kind/:id purges now: gone, its upload's quota free, audited by the key",
    async () => {
      const session = await fullSession(app, alice);
      await json(await app.call(`/agents/sessions/${session.sessionId}`, { key: alice, method: "DELETE" }));
      const purged = await json<Record<string, unknown>>(
        await app.call(`/trash/session/${session.sessionId}`, { key: alice, method: "DELETE" }),
      );
      expect(purged).toMatchObject({ sessionId: session.sessionId, threads: 1, sessionBlobs: 1 });
      expect(purged.uploads).toMatchObject({ deletedBytes: 11 });
      const { rows } = await json<{ rows: { kind: string; id: string; by: string; reason: string }[] }>(
        await app.call("/audit", { key: alice }),
      );
      const row = rows.find((r) => r.kind === "session" && r.id === session.sessionId);
      expect(row?.reason).toMatch(/^session purged from the trash/);
      const restore = await app.call(`/trash/session/${session.sessionId}/restore`, {
        key: alice,
        method: "POST",
      });
      expect(restore.status).toBe(404);
      // Registered anew, the session's quota holds nothing.
      expect(
        (await app.call("/agents/sessions", { key: alice, json: { sessionId: session.sessionId } })).status,
      ).toBe(201);
      const usage = await app.server.services.uploads.usage({ kind: "user", id: owner }, session.sessionId);
      expect(usage).toMatchObject({ usedBytes: 0, objects: 0 });
      expect(await json(await app.call(`/agents/${session.sessionId}/artifacts`, { key: alice }))).toEqual({
        artifacts: [],
      });
    },
  );

  // The embedded store checks each PUT with the app; an S3 presigned URL works until it expires,
  // and what it writes waits, unlisted, for the session's restore or purge.
  it.skipIf(!ready || name !== "the embedded PGlite")(
    "upload and download URLs handed out before the DELETE write and read nothing of the trashed session; restored, they work again",
    async () => {
      const { sessionId } = await fullSession(app, alice);
      const { url: downloadUrl } = await json<{ url: string }>(
        await app.call(`/agents/${sessionId}/artifacts/notes.txt/download`, { key: alice }),
      );
      const body = new TextEncoder().encode("late notes");
      const grant = await json<{ url: string; headers: Record<string, string> }>(
        await app.call("/agents/artifacts/upload-url", {
          key: alice,
          json: {
            agentSessionId: sessionId,
            filename: "late.txt",
            contentType: "text/plain",
            fileSize: body.byteLength,
            sha256: sha256(body),
          },
        }),
      );
      await json(await app.call(`/agents/sessions/${sessionId}`, { key: alice, method: "DELETE" }));
      const refused = await fetch(grant.url, { method: "PUT", headers: grant.headers, body });
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({ reason: "UPLOAD_REVOKED" });
      const unread = await fetch(downloadUrl);
      expect(unread.status).toBe(404);
      expect(await unread.json()).toMatchObject({ reason: "SESSION_NOT_FOUND" });
      await json(await app.call(`/trash/session/${sessionId}/restore`, { key: alice, method: "POST" }));
      expect(await (await fetch(downloadUrl)).text()).toBe("hello world");
      expect((await fetch(grant.url, { method: "PUT", headers: grant.headers, body })).status).toBe(200);
      const listed = await json<{ artifacts: { filename: string }[] }>(
        await app.call(`/agents/${sessionId}/artifacts`, { key: alice }),
      );
      expect(listed.artifacts.map(({ filename }) => filename).sort()).toEqual(["late.txt", "notes.txt"]);
    },
  );

  it.skipIf(!ready)("the sweeper purges what is past its grace period, and nothing younger", async () => {
    const young = await fullSession(app, alice);
    const old = await fullSession(app, alice);
    await json(await app.call(`/agents/sessions/${young.sessionId}`, { key: alice, method: "DELETE" }));
    // 0.000000001 days: 86 µs, over before the DELETE has answered.
    await json(
      await app.call(`/agents/sessions/${old.sessionId}?trashDays=0.000000001`, {
        key: alice,
        method: "DELETE",
      }),
    );
    const swept = await app.server.services.stowage.sweep();
    expect(swept.trash).toMatchObject({ removed: 1 });
    const listed = await json<{ items: Trashed[] }>(await app.call("/trash", { key: alice }));
    expect(listed.items.map((item) => item.id)).toEqual([young.sessionId]);
    const { rows } = await json<{ rows: { kind: string; id: string }[] }>(
      await app.call("/audit", { key: alice }),
    );
    expect(rows.filter((r) => r.id === old.sessionId).map((r) => r.kind)).toContain("session");
  });

  it.skipIf(!ready)(
    "a stored session that expired waits in the trash: listed, restored byte for byte, purged with an audit row; bob can do neither",
    async () => {
      const session = await fullSession(app, alice);
      const latest = `/requests/${session.requestId}/session-blobs/latest?format=raw`;
      const before = await app.call(latest, { key: alice });
      expect(before.status).toBe(200);
      const bytes = new Uint8Array(await before.arrayBuffer());
      const { sessionBlobs } = app.server.services;
      const expire = async () => {
        const row = await sessionBlobs.getLatestForRequest(`user:${owner}`, session.requestId);
        await sessionBlobs.create({ ...row!, expiresAt: new Date(Date.now() - 1000) });
      };
      await expire();
      expect((await app.call(latest, { key: alice })).status).toBe(404);
      const listed = await json<{ items: Trashed[] }>(await app.call("/trash", { key: alice }));
      const item = listed.items.find((thing) => thing.kind === "storedSession");
      expect(item).toMatchObject({ id: session.sessionId, by: "ttl", bytes: expect.any(Number) });
      expect(Date.parse(item!.purgeAfter) - Date.parse(item!.trashedAt)).toBe(7 * DAY_MS);
      const restorePath = `/trash/storedSession/${session.sessionId}/restore`;
      expect((await app.call(restorePath, { key: bob, method: "POST" })).status).toBe(404);
      expect(
        (await app.call(`/trash/storedSession/${session.sessionId}`, { key: bob, method: "DELETE" })).status,
      ).toBe(404);
      expect(await json(await app.call(restorePath, { key: alice, method: "POST" }))).toMatchObject({
        kind: "storedSession",
        id: session.sessionId,
      });
      const after = await app.call(latest, { key: alice });
      expect(after.status).toBe(200);
      expect(new Uint8Array(await after.arrayBuffer())).toEqual(bytes);
      await expire();
      await json(
        await app.call(`/trash/storedSession/${session.sessionId}`, { key: alice, method: "DELETE" }),
      );
      const remaining = await json<{ items: Trashed[] }>(await app.call("/trash", { key: alice }));
      expect(remaining.items.filter((thing) => thing.kind === "storedSession")).toEqual([]);
      const { rows } = await json<{ rows: { kind: string; id: string; by: string }[] }>(
        await app.call("/audit", { key: alice }),
      );
      expect(rows.filter((r) => r.id === session.sessionId && r.kind === "sessionBlobs")).toEqual([
        expect.objectContaining({ by: expect.stringMatching(/^key:/) }),
      ]);
    },
  );

  it.skipIf(!ready)(
    "a DELETE of a request's stored sessions puts them in the trash by its key: 404 to reads, restored byte for byte with their activity, purged for good; bob can do none of it",
    async () => {
      const session = await fullSession(app, alice);
      const base = `/requests/${session.requestId}/session-blobs`;
      const latest = `${base}/latest?format=raw`;
      const bytes = new Uint8Array(await (await app.call(latest, { key: alice })).arrayBuffer());
      expect((await app.call(base, { key: bob, method: "DELETE" })).status).toBe(404);
      const answer = await json<{ requestId: string; trash: { records: number; purgeAfter: string } }>(
        await app.call(base, { key: alice, method: "DELETE" }),
      );
      expect(answer.requestId).toBe(session.requestId);
      expect(answer.trash.records).toBe(1);
      expect(Math.abs(Date.parse(answer.trash.purgeAfter) - Date.now() - 7 * DAY_MS)).toBeLessThan(60_000);
      expect((await app.call(latest, { key: alice })).status).toBe(404);
      expect((await app.call(`/session-blobs/${session.sessionId}`, { key: alice })).status).toBe(404);
      // Deleted already: a second DELETE finds nothing live.
      expect((await app.call(base, { key: alice, method: "DELETE" })).status).toBe(404);
      const listed = await json<{ items: Trashed[] }>(await app.call("/trash", { key: alice }));
      expect(listed.items.filter((thing) => thing.kind === "storedSession")).toEqual([
        expect.objectContaining({ id: session.sessionId, by: expect.stringMatching(/^key:/) }),
      ]);
      expect(
        (await json<{ items: Trashed[] }>(await app.call("/trash", { key: bob }))).items.some(
          (thing) => thing.id === session.sessionId,
        ),
      ).toBe(false);
      const restorePath = `/trash/storedSession/${session.sessionId}/restore`;
      expect((await app.call(restorePath, { key: bob, method: "POST" })).status).toBe(404);
      await json(await app.call(restorePath, { key: alice, method: "POST" }));
      const back = await app.call(latest, { key: alice });
      expect(back.status).toBe(200);
      expect(new Uint8Array(await back.arrayBuffer())).toEqual(bytes);
      expect((await app.call(`${base}/activity`, { key: alice })).status).toBe(200);
      // Into the trash again, then purged: gone from the trash and from every read, an audit row by the key.
      await json(await app.call(base, { key: alice, method: "DELETE" }));
      await json(
        await app.call(`/trash/storedSession/${session.sessionId}`, { key: alice, method: "DELETE" }),
      );
      expect(
        (await json<{ items: Trashed[] }>(await app.call("/trash", { key: alice }))).items.some(
          (thing) => thing.id === session.sessionId,
        ),
      ).toBe(false);
      expect((await app.call(latest, { key: alice })).status).toBe(404);
      const { rows } = await json<{ rows: { kind: string; id: string; by: string; reason: string }[] }>(
        await app.call("/audit?limit=1000", { key: alice }),
      );
      const mine = rows.filter(
        (row) => row.kind === "sessionBlobs" && [session.requestId, session.sessionId].includes(row.id),
      );
      expect(mine.map((row) => [row.id, row.reason.split(":")[0]])).toEqual([
        [session.requestId, expect.stringContaining("moved to the trash")],
        [session.requestId, expect.stringContaining("moved to the trash")],
        [session.sessionId, "purged from the trash"],
      ]);
      expect(mine.every((row) => row.by.startsWith("key:"))).toBe(true);
      // trashDays=0 deletes now; another trash time than the deployment's is refused.
      const now = await fullSession(app, alice);
      const nowBase = `/requests/${now.requestId}/session-blobs`;
      const refused = await app.call(`${nowBase}?trashDays=3`, { key: alice, method: "DELETE" });
      expect(refused.status).toBe(400);
      expect((await refused.json()) as { reason?: string }).toMatchObject({ reason: "TRASH_DAYS_FIXED" });
      expect(await json(await app.call(`${nowBase}?trashDays=0`, { key: alice, method: "DELETE" }))).toEqual({
        requestId: now.requestId,
        deleted: 1,
      });
      expect(
        (await json<{ items: Trashed[] }>(await app.call("/trash", { key: alice }))).items.some(
          (thing) => thing.id === now.sessionId,
        ),
      ).toBe(false);
    },
  );

  it.skipIf(!ready)("refuses hostile input", async () => {
    const sessionId = randomUUID();
    expect((await app.call("/agents/sessions", { key: alice, json: { sessionId } })).status).toBe(201);
    for (const [path, method, status] of [
      ["/trash/session/..%2F..%2Fx/restore", "POST", 400],
      ["/trash/uploads/x/restore", "POST", 400],
      ["/trash/..%2Fsession/x", "DELETE", 400],
      [`/trash/session/${randomUUID()}/restore`, "POST", 404],
      [`/agents/sessions/${sessionId}?trashDays=-1`, "DELETE", 400],
      [`/agents/sessions/${sessionId}?trashDays=week`, "DELETE", 400],
      [`/agents/sessions/${sessionId}?trashDays=400`, "DELETE", 400],
      ["/requests/req-x/session-blobs?trashDays=-1", "DELETE", 400],
      ["/requests/req-x/session-blobs?trashDays=0x10", "DELETE", 400],
      ["/requests/..%2Fx/session-blobs", "DELETE", 400],
      ["/requests/req-none/session-blobs", "DELETE", 404],
    ] as const) {
      const response = await app.call(path, { key: alice, method });
      expect(response.status, path).toBe(status);
    }
    // None of them deleted the session.
    expect((await app.call(`/sessions/${sessionId}`, { key: alice })).status).toBe(200);
  });
});

describe("stowage trash", () => {
  // Ten commands, each opening the embedded database as a user's would: 7–12 s in all on this
  // machine, 126 s in a CI run at load 17, past the shared 120 s bound (which is there to catch
  // hangs, not a loaded machine).
  const TEN_DATABASE_OPENS_MS = 600_000;
  it("lists, restores and purges from the deployment's data, JSON or lines", {
    timeout: TEN_DATABASE_OPENS_MS,
  }, async () => {
    const app = await startTestApp({ STOWAGE_TRASH_DAYS: "3" });
    const alice = await app.keyFor({ kind: "user", id: "alice" });
    const kept = await fullSession(app, alice);
    const gone = await fullSession(app, alice);
    for (const { sessionId } of [kept, gone]) {
      await json(await app.call(`/agents/sessions/${sessionId}`, { key: alice, method: "DELETE" }));
    }
    // The CLI opens the same embedded database: the server lets it go first.
    await app.server.close();
    const env = { STOWAGE_DATA_DIR: app.dataDir, STOWAGE_TRASH_DAYS: "3" };
    const cli = (argv: string[]) => run(argv, { cwd: app.dataDir, env });
    try {
      const listed = JSON.parse((await cli(["trash", "list", "--user", "alice", "--json"])).stdout) as {
        items: Trashed[];
      };
      expect(listed.items.map((item) => item.id).sort()).toEqual([kept.sessionId, gone.sessionId].sort());
      expect(Date.parse(listed.items[0]!.purgeAfter) - Date.parse(listed.items[0]!.trashedAt)).toBe(
        3 * DAY_MS,
      );
      expect((await cli(["trash", "list", "--user", "bob"])).stdout).toBe("0 in the trash, 0 bytes\n");
      expect((await cli(["trash", "restore", kept.sessionId, "--user", "alice"])).stdout).toBe(
        `restored session ${kept.sessionId}\n`,
      );
      const purged = JSON.parse(
        (await cli(["trash", "purge", gone.sessionId, "--user", "alice", "--json"])).stdout,
      );
      expect(purged).toMatchObject({ sessionId: gone.sessionId, threads: 1 });
      const audit = JSON.parse((await cli(["audit", "--user", "alice", "--json"])).stdout) as {
        rows: { kind: string; id: string; by: string }[];
      };
      expect(audit.rows.find((row) => row.kind === "session" && row.id === gone.sessionId)?.by).toBe("cli");
      expect((await cli(["trash", "list", "--user", "alice"])).stdout).toBe("0 in the trash, 0 bytes\n");
      await expect(cli(["trash", "restore", gone.sessionId, "--user", "bob"])).rejects.toMatchObject({
        code: "NOT_FOUND",
      });
      await expect(cli(["trash", "list"])).rejects.toThrow(/--user <id> or --org <id>/);
      await expect(cli(["trash", "restore", "../x", "--user", "alice"])).rejects.toMatchObject({
        code: "INVALID_INPUT",
      });
    } finally {
      await rm(app.dataDir, { recursive: true, force: true });
    }
  });
});

// One app for the tests below that need no deployment of their own (each acts as principals of
// its own, so none sees another's trash or audit rows): an app's start is about a second of CPU,
// several under a loaded CI. Started by the first test that needs it, so `-t` runs one alone.
let shared: Promise<TestApp> | undefined;
const sharedApp = () =>
  (shared ??= startTestApp({ STOWAGE_UPLOAD_RETENTION_DAYS: "30", STOWAGE_TRASH_DAYS: "7" }));
afterAll(async () => {
  await (await shared)?.close();
});

describe("uploads past retention in the trash", () => {
  it("are listed, restored byte for byte and purged through /trash; bob can do neither", async () => {
    const app = await sharedApp();
    const [owner, other] = [`alice-${randomUUID().slice(0, 8)}`, `bob-${randomUUID().slice(0, 8)}`];
    const alice = await app.keyFor({ kind: "user", id: owner });
    const bob = await app.keyFor({ kind: "user", id: other });
    const { sessionId } = await fullSession(app, alice);
    // The upload's file, 31 days old: one day past the retention.
    const [file] = await findFiles(join(app.dataDir, "objects"), `${sessionId}/artifacts/notes.txt`);
    const age = async () => {
      const at = new Date(Date.now() - 31 * DAY_MS);
      await utimes(file!, at, at);
    };
    await age();
    const artifacts = `/agents/${sessionId}/artifacts`;
    const listedNames = async () =>
      (
        await json<{ artifacts: { filename: string }[] }>(await app.call(artifacts, { key: alice }))
      ).artifacts.map((artifact) => artifact.filename);
    expect(await listedNames()).toEqual([]);
    const { items } = await json<{ items: Trashed[] }>(await app.call("/trash", { key: alice }));
    expect(items).toEqual([
      expect.objectContaining({ kind: "upload", id: `${sessionId}/notes.txt`, by: "retention", bytes: 11 }),
    ]);
    expect((await json<{ items: Trashed[] }>(await app.call("/trash", { key: bob }))).items).toEqual([]);
    // The id holds a slash: one path segment, percent-encoded.
    const one = `/trash/upload/${encodeURIComponent(`${sessionId}/notes.txt`)}`;
    expect((await app.call(`${one}/restore`, { key: bob, method: "POST" })).status).toBe(404);
    expect((await app.call(one, { key: bob, method: "DELETE" })).status).toBe(404);
    expect(await json(await app.call(`${one}/restore`, { key: alice, method: "POST" }))).toMatchObject({
      kind: "upload",
      id: `${sessionId}/notes.txt`,
    });
    expect(await listedNames()).toEqual(["notes.txt"]);
    expect(await readFile(file!, "utf8")).toBe("hello world");

    await age();
    await json(await app.call(one, { key: alice, method: "DELETE" }));
    expect(await findFiles(join(app.dataDir, "objects"), `${sessionId}/artifacts/notes.txt`)).toEqual([]);
    expect((await json<{ items: Trashed[] }>(await app.call("/trash", { key: alice }))).items).toEqual([]);
    const { rows } = await json<{ rows: { kind: string; id: string; by: string }[] }>(
      await app.call("/audit", { key: alice }),
    );
    expect(rows.filter((row) => row.kind === "uploads")).toEqual([
      expect.objectContaining({ id: `${sessionId}/notes.txt`, by: expect.stringMatching(/^key:/) }),
    ]);
    for (const [path, method] of [
      [`/trash/upload/${encodeURIComponent("../x/notes.txt")}/restore`, "POST"],
      [`/trash/upload/${encodeURIComponent(`${sessionId}/../notes.txt`)}`, "DELETE"],
      [`/trash/upload/${encodeURIComponent(`${sessionId}/`)}/restore`, "POST"],
    ] as const) {
      expect((await app.call(path, { key: alice, method })).status, path).toBe(400);
    }
  });
});

/** Files under `root` whose path ends with `suffix`. */
async function findFiles(root: string, suffix: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .filter((path) => path.endsWith(`/${suffix}`));
}

describe("blobs garbage collection took, in the trash", () => {
  it("are listed for whoever stored them, restored through /trash, and bob's own claim alone goes with his purge", async () => {
    const app = await startTestApp({ STOWAGE_TRASH_DAYS: "7" });
    try {
      const alice = await app.keyFor({ kind: "user", id: "alice" });
      const bob = await app.keyFor({ kind: "user", id: "bob" });
      const carol = await app.keyFor({ kind: "user", id: "carol" });
      const content = "a screenshot nothing names any more";
      const { hash } = await json<{ hash: string }>(await app.call("/blobs", { key: alice, body: content }));
      await json(await app.call("/blobs", { key: bob, body: content }));
      await ageFiles(join(app.dataDir, "objects", "blobs"), 1200);
      expect(
        await app.server.services.stowage.collectGarbage({ graceMs: 0, singleHost: true }),
      ).toMatchObject({
        trashed: 1,
      });
      expect((await app.call(`/blobs/${hash}`, { key: alice })).status).toBe(404);
      for (const key of [alice, bob]) {
        expect((await json<{ items: Trashed[] }>(await app.call("/trash", { key }))).items).toEqual([
          expect.objectContaining({ kind: "blob", id: hash, by: "gc", bytes: content.length }),
        ]);
      }
      expect((await json<{ items: Trashed[] }>(await app.call("/trash", { key: carol }))).items).toEqual([]);
      expect((await app.call(`/trash/blob/${hash}/restore`, { key: carol, method: "POST" })).status).toBe(
        404,
      );
      expect((await app.call(`/trash/blob/..%2Fx/restore`, { key: alice, method: "POST" })).status).toBe(400);

      await json(await app.call(`/trash/blob/${hash}/restore`, { key: alice, method: "POST" }));
      expect(await (await app.call(`/blobs/${hash}`, { key: bob })).text()).toBe(content);
      expect((await json<{ items: Trashed[] }>(await app.call("/trash", { key: alice }))).items).toEqual([]);

      // Taken again; bob gives his claim up, alice's stays listed.
      await ageFiles(join(app.dataDir, "objects", "blobs"), 1200);
      await app.server.services.stowage.collectGarbage({ graceMs: 0, singleHost: true });
      await json(await app.call(`/trash/blob/${hash}`, { key: bob, method: "DELETE" }));
      expect((await json<{ items: Trashed[] }>(await app.call("/trash", { key: bob }))).items).toEqual([]);
      expect((await json<{ items: Trashed[] }>(await app.call("/trash", { key: alice }))).items).toEqual([
        expect.objectContaining({ kind: "blob", id: hash }),
      ]);
    } finally {
      await app.close();
    }
  });
});

describe("a session's uploads deleted into the trash", () => {
  it("DELETE …/uploads moves them there: listed by who deleted them, restored, purged; other days 400, bob 404", async () => {
    const app = await sharedApp();
    const [owner, other] = [`alice-${randomUUID().slice(0, 8)}`, `bob-${randomUUID().slice(0, 8)}`];
    const alice = await app.keyFor({ kind: "user", id: owner });
    const bob = await app.keyFor({ kind: "user", id: other });
    const { sessionId } = await fullSession(app, alice);
    const uploads = `/agents/sessions/${sessionId}/uploads`;
    const artifacts = `/agents/${sessionId}/artifacts`;
    const listedNames = async () =>
      (
        await json<{ artifacts: { filename: string }[] }>(await app.call(artifacts, { key: alice }))
      ).artifacts.map((artifact) => artifact.filename);
    expect((await app.call(uploads, { key: bob, method: "DELETE" })).status).toBe(404);
    expect((await app.call(`${uploads}?trashDays=3`, { key: alice, method: "DELETE" })).status).toBe(400);
    expect(await listedNames()).toEqual(["notes.txt"]);

    const report = await json<{ trash: { uploads: number; bytes: number; purgeAfter: string } }>(
      await app.call(uploads, { key: alice, method: "DELETE" }),
    );
    expect(report.trash).toMatchObject({ uploads: 1, bytes: 11 });
    expect(await listedNames()).toEqual([]);
    const { items } = await json<{ items: Trashed[] }>(await app.call("/trash", { key: alice }));
    expect(items.filter((item) => item.kind === "upload")).toEqual([
      expect.objectContaining({
        id: `${sessionId}/notes.txt`,
        by: expect.stringMatching(/^key:/),
        bytes: 11,
      }),
    ]);
    const one = `/trash/upload/${encodeURIComponent(`${sessionId}/notes.txt`)}`;
    expect((await app.call(`${one}/restore`, { key: bob, method: "POST" })).status).toBe(404);
    await json(await app.call(`${one}/restore`, { key: alice, method: "POST" }));
    expect(await listedNames()).toEqual(["notes.txt"]);

    await json(await app.call(uploads, { key: alice, method: "DELETE" }));
    await json(await app.call(one, { key: alice, method: "DELETE" }));
    expect((await json<{ items: Trashed[] }>(await app.call("/trash", { key: alice }))).items).toEqual([]);
    const { rows } = await json<{ rows: { kind: string; id: string; reason: string }[] }>(
      await app.call("/audit", { key: alice }),
    );
    expect(rows.filter((row) => row.kind === "uploads").map((row) => row.reason)).toEqual([
      expect.stringContaining("moved to the trash"),
      expect.stringContaining("moved to the trash"),
      expect.stringContaining("its session's uploads deleted by key:"),
    ]);
  });
});

describe("Agent SDK transcripts in the trash", () => {
  it("what the SDK deletes through the deployment's SessionStore is listed, restored and purged through /trash; bob can do neither", async () => {
    const app = await sharedApp();
    const [owner, other] = [`alice-${randomUUID().slice(0, 8)}`, `bob-${randomUUID().slice(0, 8)}`];
    const alice = await app.keyFor({ kind: "user", id: owner });
    const bob = await app.keyFor({ kind: "user", id: other });
    // The SDK runs in the embedding process, on the tenant's store (as `sessionStore`).
    const transcripts = app.server.services.stowage.tenant({ kind: "user", id: owner }).agentSdkSessions;
    const key = { projectKey: "-workspace-app", sessionId: randomUUID() };
    const entries = [{ type: "user", uuid: randomUUID(), message: { role: "user", content: "hello" } }];
    await transcripts.append(key, entries);
    await transcripts.delete(key);
    const { items } = await json<{ items: Trashed[] }>(await app.call("/trash", { key: alice }));
    const [item] = items.filter((thing) => thing.kind === "transcript");
    expect(item).toMatchObject({ id: expect.stringMatching(/^-workspace-app\//), by: "agent-sdk" });
    expect(item!.bytes).toBeGreaterThan(0);
    expect((await json<{ items: Trashed[] }>(await app.call("/trash", { key: bob }))).items).toEqual([]);
    const one = `/trash/transcript/${encodeURIComponent(item!.id)}`;
    expect((await app.call(`${one}/restore`, { key: bob, method: "POST" })).status).toBe(404);
    expect(
      (await app.call(`/trash/transcript/no-slash/restore`, { key: alice, method: "POST" })).status,
    ).toBe(400);
    await json(await app.call(`${one}/restore`, { key: alice, method: "POST" }));
    expect(await transcripts.load(key)).toEqual(entries);

    await transcripts.delete(key);
    const [again] = (await json<{ items: Trashed[] }>(await app.call("/trash", { key: alice }))).items;
    const purge = `/trash/transcript/${encodeURIComponent(again!.id)}`;
    expect((await app.call(purge, { key: bob, method: "DELETE" })).status).toBe(404);
    expect(await json(await app.call(purge, { key: alice, method: "DELETE" }))).toEqual({
      sessionId: key.sessionId,
      agentSdkSessions: { transcripts: 1, deletedBytes: again!.bytes },
    });
    expect(await transcripts.load(key)).toBeNull();
    const { rows } = await json<{ rows: { kind: string; by: string; reason: string }[] }>(
      await app.call("/audit", { key: alice }),
    );
    expect(rows.filter((row) => row.kind === "agentSdkSessions").map((row) => [row.by, row.reason])).toEqual([
      ["agent-sdk", "moved to the trash for 7 days"],
      ["agent-sdk", "moved to the trash for 7 days"],
      [expect.stringMatching(/^key:/), expect.stringMatching(/^purged from the trash: asked by key:/)],
    ]);
  });
});
