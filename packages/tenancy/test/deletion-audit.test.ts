import { randomUUID } from "node:crypto";
import { utimes } from "node:fs/promises";
import { join } from "node:path";
import { createMemoryObjectStore, type ObjectStore, StowageError } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { compressChunks } from "@stowage/sessions";
import { createFsObjectStore } from "@stowage/storage-fs";
import { tempDirectory } from "@stowage/test-support";
import { textItem } from "@stowage/thread-items";
import { describe, expect, it } from "vitest";
import type { StowageOptions } from "../src/index.js";
import { deletionAuditAt, pruneDeletionAudits } from "../src/shared/deletion-audit.js";
import { type DeletionAuditRow, SHARED_LAYOUT } from "../src/shared/index.js";
import { processOn as processIn } from "./support/deployment-process.js";

const base = await tempDirectory("stowage-deletion-audit-");
const alice = { kind: "user", id: "alice" } as const;
const bob = { kind: "user", id: "bob" } as const;
const text = (value: string) => new TextEncoder().encode(value);
const DAY_MS = 24 * 3600 * 1000;

/** A deployment on one data directory, deleting at once: the trash before a deletion, and its purge's rows, are test/trash.test.ts's. */
const processOn = (
  dir: string,
  extra: Partial<StowageOptions<never>> = {},
  wrap?: (store: ObjectStore) => ObjectStore,
) => processIn(dir, { trashDays: 0, ...extra }, wrap);

/** Every row of an audit, page by page with a small page. */
async function allRows(audit: {
  list: (o: { cursor?: string; limit?: number }) => Promise<{ rows: DeletionAuditRow[]; cursor?: string }>;
}) {
  const rows: DeletionAuditRow[] = [];
  let cursor: string | undefined;
  do {
    const page = await audit.list({ limit: 3, ...(cursor === undefined ? {} : { cursor }) });
    rows.push(...page.rows);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return rows;
}

describe("the deletion audit log", () => {
  it("lists appends of one millisecond in the order they were made (a collection's row, then the purge after it)", async () => {
    const at = new Date("2026-11-01T10:00:00.000Z");
    const audit = deletionAuditAt(createMemoryObjectStore(), "deletion-audit/user/alice/", { now: () => at });
    const ids = Array.from({ length: 40 }, (_, index) => `blob-${index}`);
    for (const id of ids) await audit.append([{ kind: "blobs", id, by: "gc", reason: "taken" }]);
    expect((await allRows(audit)).map((row) => row.id)).toEqual(ids);
  });

  it("keeps appended rows oldest first, pages through them, and filters by since", async () => {
    let now = new Date("2026-11-01T10:00:00.000Z");
    const audit = deletionAuditAt(createMemoryObjectStore(), "deletion-audit/user/alice/", {
      now: () => now,
    });
    await audit.append([
      { kind: "uploads", id: "s1/a.txt", bytes: 5, by: "key:abc", reason: "its session was deleted" },
      { kind: "threads", id: "s1", by: "key:abc", reason: "its session was deleted", report: { removed: 2 } },
    ]);
    now = new Date("2026-11-03T10:00:00.000Z");
    await audit.append([{ kind: "sessionBlobs", id: "s2", bytes: 9, by: "ttl", reason: "expired" }]);
    await audit.append([]);
    const rows = await allRows(audit);
    expect(rows).toEqual([
      {
        kind: "uploads",
        id: "s1/a.txt",
        bytes: 5,
        by: "key:abc",
        at: "2026-11-01T10:00:00.000Z",
        reason: "its session was deleted",
      },
      {
        kind: "threads",
        id: "s1",
        by: "key:abc",
        at: "2026-11-01T10:00:00.000Z",
        reason: "its session was deleted",
        report: { removed: 2 },
      },
      {
        kind: "sessionBlobs",
        id: "s2",
        bytes: 9,
        by: "ttl",
        at: "2026-11-03T10:00:00.000Z",
        reason: "expired",
      },
    ]);
    const page = await audit.list({ limit: 1 });
    expect(page.rows.map((row) => row.kind)).toEqual(["uploads"]);
    const next = await audit.list({ limit: 1, cursor: page.cursor! });
    expect(next.rows.map((row) => row.kind)).toEqual(["threads"]);
    const since = await audit.list({ since: new Date("2026-11-02T00:00:00.000Z") });
    expect(since).toEqual({ rows: [rows[2]], unreadable: 0 });
  });

  it("never keeps content: a store's report keeps only its numbers and flags", async () => {
    const store = createMemoryObjectStore();
    const audit = deletionAuditAt(store, "deletion-audit/user/alice/");
    await audit.append([
      {
        kind: "notes",
        id: "s1",
        by: "operator",
        reason: "its session was deleted",
        report: { removed: 1, had: true, secret: "sk-live-123", nested: { text: "x" } } as never,
      },
    ]);
    const [row] = (await audit.list()).rows;
    expect(row!.report).toEqual({ removed: 1, had: true });
    const stored = await Promise.all(
      (await store.list({ prefix: "deletion-audit/" })).items.map(async (item) =>
        new TextDecoder().decode((await store.get(item.key))!),
      ),
    );
    expect(stored.join("")).not.toContain("sk-live-123");
  });

  it.each([
    ["no kind", { id: "x", by: "gc", reason: "r" }],
    ["an empty id", { kind: "blobs", id: "", by: "gc", reason: "r" }],
    ["negative bytes", { kind: "blobs", id: "x", bytes: -1, by: "gc", reason: "r" }],
    ["fractional bytes", { kind: "blobs", id: "x", bytes: 1.5, by: "gc", reason: "r" }],
    ["a reason of 501 characters", { kind: "blobs", id: "x", by: "gc", reason: "r".repeat(501) }],
    ["a time that is none", { kind: "blobs", id: "x", by: "gc", reason: "r", at: "yesterday" }],
    ["a number as by", { kind: "blobs", id: "x", by: 7, reason: "r" }],
  ])("refuses a row with %s, writing nothing", async (_why, row) => {
    const store = createMemoryObjectStore();
    const audit = deletionAuditAt(store, "deletion-audit/user/alice/");
    await expectStowageError(audit.append([row as never]), "INVALID_INPUT");
    expect((await store.list()).items).toEqual([]);
  });

  it.each([
    ["garbage", "not-a-cursor"],
    [
      "another principal's object",
      Buffer.from(JSON.stringify(["deletion-audit/user/bob/x", 0])).toString("base64url"),
    ],
    [
      "a negative index",
      Buffer.from(JSON.stringify(["deletion-audit/user/alice/x", -1])).toString("base64url"),
    ],
    ["an overlong cursor", "a".repeat(5000)],
    ["an empty cursor", ""],
  ])("refuses a hostile cursor: %s", async (_why, cursor) => {
    const audit = deletionAuditAt(createMemoryObjectStore(), "deletion-audit/user/alice/");
    await expectStowageError(audit.list({ cursor }), "INVALID_INPUT");
  });

  it.each([0, -1, 1.5, 1001, Number.NaN])("refuses limit %s", async (limit) => {
    const audit = deletionAuditAt(createMemoryObjectStore(), "deletion-audit/user/alice/");
    await expectStowageError(audit.list({ limit }), "INVALID_INPUT");
  });

  it("skips and counts a damaged object instead of failing the whole audit", async () => {
    const store = createMemoryObjectStore();
    const audit = deletionAuditAt(store, "deletion-audit/user/alice/");
    await audit.append([{ kind: "blobs", id: "x", by: "gc", reason: "r" }]);
    await store.put("deletion-audit/user/alice/2026-01-01/000000000000001-damaged.json", text("{not json"));
    const page = await audit.list();
    expect(page.rows).toHaveLength(1);
    expect(page.unreadable).toBe(1);
  });

  it("two processes appending at once keep every row", async () => {
    const dir = join(base, randomUUID());
    const one = deletionAuditAt(createFsObjectStore({ root: dir }), "deletion-audit/user/alice/");
    const two = deletionAuditAt(createFsObjectStore({ root: dir }), "deletion-audit/user/alice/");
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        (i % 2 ? one : two).append([{ kind: "blobs", id: `blob-${i}`, by: "gc", reason: "r" }]),
      ),
    );
    const ids = (await allRows(one)).map((row) => row.id).sort();
    expect(ids).toEqual(Array.from({ length: 40 }, (_, i) => `blob-${i}`).sort());
  });

  it("prunes whole days past the retention, and nothing younger", async () => {
    const store = createMemoryObjectStore();
    const now = new Date("2027-12-31T12:00:00.000Z");
    for (const [who, at] of [
      ["user/alice", "2026-11-01T00:00:00.000Z"],
      ["org/acme", "2026-11-25T00:00:00.000Z"],
      ["user/alice", "2027-12-30T00:00:00.000Z"],
    ] as const) {
      await deletionAuditAt(store, `deletion-audit/${who}/`, { now: () => new Date(at) }).append([
        { kind: "blobs", id: at, by: "gc", reason: "r" },
      ]);
    }
    await store.put("deletion-audit/not-an-audit-object", text("x"));
    // 400 days before 2027-12-31 is 2026-11-26: the first two days go.
    expect(await pruneDeletionAudits(store, "deletion-audit/", { now })).toBe(2);
    const left = (await store.list({ prefix: "deletion-audit/" })).items.map((item) => item.key);
    expect(left).toHaveLength(2);
    expect(left.some((key) => key.includes("2027-12-30"))).toBe(true);
  });
});

/** A session of `principal` with something in several stores, its upload `bytes` long. */
async function sessionWithData(
  stowage: ReturnType<typeof processOn>["stowage"],
  uploadStore: ObjectStore,
  principal: typeof alice,
  upload = "{}",
) {
  const sessionId = randomUUID();
  const tenant = stowage.tenant(principal);
  await tenant.registeredSessions.register(sessionId);
  await tenant.threads.post({ jobId: sessionId, alias: "main" }, textItem("hello"));
  await tenant.sessionBlobs.create({
    requestId: "req-1",
    sessionId,
    agentType: "claude-code",
    codec: "gzip",
    blob: await compressChunks("gzip", [text("{}\n")]),
    rawSizeBytes: 3,
  });
  await tenant.agentSessions.create(sessionId);
  await uploadStore.put(
    `sessions/${principal.kind}/${principal.id}/${sessionId}/artifacts/notes.txt`,
    text(upload),
  );
  return sessionId;
}

describe("what deletions leave in the audit", () => {
  it("a session's deletion: its row, and one per store that removed something, by who asked", async () => {
    const { stowage, uploadStore } = processOn(join(base, randomUUID()));
    const sessionId = await sessionWithData(stowage, uploadStore, alice, "hello");
    const before = Date.now();
    await stowage.deleteSession(alice, sessionId, { by: "key:k1" });
    const rows = (await stowage.tenant(alice).deletionAudit.list()).rows;
    expect(rows.map((row) => [row.kind, row.id, row.by])).toEqual([
      ["session", sessionId, "key:k1"],
      ["uploads", sessionId, "key:k1"],
      ["threads", sessionId, "key:k1"],
      ["sessionBlobs", sessionId, "key:k1"],
      ["agentSessions", sessionId, "key:k1"],
    ]);
    expect(rows[1]).toMatchObject({ bytes: 5, report: { deletedObjects: 1, deletedBytes: 5 } });
    expect(rows[2]).toMatchObject({ report: { removed: 1 } });
    for (const row of rows) expect(Date.parse(row.at)).toBeGreaterThanOrEqual(before - 1000);
    // Bob's audit holds nothing of it.
    expect((await stowage.tenant(bob).deletionAudit.list()).rows).toEqual([]);
    await expectStowageError(stowage.deleteSession(alice, randomUUID(), { by: "" }), "INVALID_INPUT");
  });

  it("a deletion whose audit write fails keeps the session marked; sending it again writes the row", async () => {
    const dir = join(base, randomUUID());
    let auditDown = false;
    // The shared store as a crash between the deletion and its audit write sees it: the write fails.
    const failingAudit = (store: ObjectStore): ObjectStore => ({
      ...store,
      iterate: (options) => store.iterate(options),
      put: async (key, body, options) => {
        if (auditDown && key.startsWith(SHARED_LAYOUT.deletionAudit)) {
          throw new StowageError("UNAVAILABLE", "audit store down");
        }
        return store.put(key, body, options);
      },
    });
    const { stowage, uploadStore } = processOn(dir, {}, failingAudit);
    const sessionId = await sessionWithData(stowage, uploadStore, alice);
    auditDown = true;
    await expectStowageError(stowage.deleteSession(alice, sessionId), "UNAVAILABLE");
    auditDown = false;
    const tenant = stowage.tenant(alice);
    expect(await tenant.registeredSessions.state(sessionId)).toBe("deleting");
    await stowage.deleteSession(alice, sessionId);
    expect(await tenant.registeredSessions.state(sessionId)).toBeNull();
    const rows = (await tenant.deletionAudit.list()).rows;
    expect(rows).toEqual([
      expect.objectContaining({
        kind: "session",
        id: sessionId,
        by: "operator",
        reason: expect.stringContaining("cut short"),
      }),
    ]);
  });

  it("two processes deleting at once keep every row", async () => {
    const dir = join(base, randomUUID());
    const one = processOn(dir);
    const two = processOn(dir);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push(await sessionWithData(one.stowage, one.uploadStore, alice));
    await Promise.all(
      ids.map((id, i) => (i % 2 ? one : two).stowage.deleteSession(alice, id, { by: `key:p${i % 2}` })),
    );
    const rows = await allRows(one.stowage.tenant(alice).deletionAudit);
    const sessions = rows.filter((row) => row.kind === "session").map((row) => row.id);
    expect(sessions.sort()).toEqual([...ids].sort());
    // Uploads and threads of each: every store's row is there too.
    for (const kind of ["uploads", "threads"]) {
      expect(
        rows
          .filter((row) => row.kind === kind)
          .map((row) => row.id)
          .sort(),
      ).toEqual([...ids].sort());
    }
  });

  it("a sweep: expired stored sessions (ttl) and uploads past retention (retention), each in its owner's audit", async () => {
    const dir = join(base, randomUUID());
    const { stowage, uploadStore } = processOn(dir, { uploadRetentionDays: 30 });
    const sessionId = randomUUID();
    await stowage.tenant(alice).sessionBlobs.create({
      requestId: "req-ttl",
      sessionId,
      agentType: "claude-code",
      codec: "gzip",
      blob: await compressChunks("gzip", [text("{}\n")]),
      rawSizeBytes: 3,
      // Past the deployment's 7 trash days: an expired capture waits in the trash until then.
      expiresAt: new Date(Date.now() - 8 * DAY_MS),
    });
    const old = `sessions/user/bob/${randomUUID()}/artifacts/old.txt`;
    await uploadStore.put(old, text("old bytes"));
    const past = new Date(Date.now() - 40 * DAY_MS);
    await utimes(join((uploadStore as unknown as { root: string }).root, old), past, past);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const report = await stowage.sweep();
    expect(report).toMatchObject({ sessionBlobs: { removed: 1 }, uploads: { removed: 1 } });
    expect((await stowage.tenant(alice).deletionAudit.list()).rows).toEqual([
      expect.objectContaining({ kind: "sessionBlobs", id: sessionId, by: "ttl", bytes: expect.any(Number) }),
    ]);
    expect((await stowage.tenant(bob).deletionAudit.list()).rows).toEqual([
      expect.objectContaining({
        kind: "uploads",
        id: `${old.split("/")[3]}/old.txt`,
        bytes: 9,
        by: "retention",
      }),
    ]);
    // Idempotent: a second run finds nothing and writes nothing.
    expect(await stowage.sweep()).toMatchObject({ sessionBlobs: { removed: 0 }, uploads: { removed: 0 } });
    expect((await stowage.tenant(alice).deletionAudit.list()).rows).toHaveLength(1);
  });

  it("a sweep: an upload that landed through a URL its session's deletion revoked, in its owner's audit", async () => {
    const { stowage, uploads, uploadStore } = processOn(join(base, randomUUID()));
    const sessionId = randomUUID();
    await stowage.tenant(bob).registeredSessions.register(sessionId);
    const late = text("written after the delete");
    const grant = await uploads.requestUpload({
      principal: bob,
      sessionId,
      filename: "late.txt",
      contentType: "text/plain",
      fileSize: late.byteLength,
    });
    await stowage.deleteSession(bob, sessionId, { by: "key:bob" });
    // The revoked URL's PUT lands anyway, as S3 lets a presigned PUT do until it expires.
    await uploadStore.put(grant.key, late);
    expect((await stowage.sweep()).uploads).toMatchObject({ removed: 1 });
    expect((await stowage.tenant(bob).deletionAudit.list()).rows.at(-1)).toMatchObject({
      kind: "uploads",
      id: `${sessionId}/late.txt`,
      by: "retention",
      reason: expect.stringContaining("revoked"),
    });
  });

  it("garbage collection: each deleted blob in the audit of every principal that stored it, else the deployment's", async () => {
    const { stowage } = processOn(join(base, randomUUID()));
    const both = await stowage.ownedBlobs(alice).put(text("stored by two"));
    await stowage.ownedBlobs(bob).put(text("stored by two"));
    const nobody = await stowage.blobs.put(text("stored without an owner"));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const report = await stowage.collectGarbage({ graceMs: 0, timestampSlackMs: 0 });
    expect(report.deleted).toBe(2);
    for (const principal of [alice, bob]) {
      expect((await stowage.tenant(principal).deletionAudit.list()).rows).toEqual([
        expect.objectContaining({ kind: "blobs", id: both.hash, bytes: 13, by: "gc" }),
      ]);
    }
    expect((await stowage.deploymentAudit.list()).rows).toEqual([
      expect.objectContaining({ kind: "blobs", id: nobody.hash, bytes: 23, by: "gc" }),
    ]);
  });

  it("garbage collection with the deployment's trash: taken blobs wait there with their owners, come back, and are purged audited", async () => {
    const dir = join(base, randomUUID());
    // Another process of the deployment keeps taken blobs its 7 trash days.
    const keeping = processIn(dir, {}).stowage;
    const both = await keeping.ownedBlobs(alice).put(text("stored by two"));
    await keeping.ownedBlobs(bob).put(text("stored by two"));
    await new Promise((resolve) => setTimeout(resolve, 5));
    const report = await keeping.collectGarbage({ graceMs: 0, timestampSlackMs: 0 });
    expect(report).toMatchObject({ deleted: 1, trashed: 1 });
    expect(await keeping.ownedBlobs(alice).has(both.hash)).toBe(false);
    for (const principal of [alice, bob]) {
      expect((await keeping.tenant(principal).deletionAudit.list()).rows).toEqual([
        expect.objectContaining({
          kind: "blobs",
          id: both.hash,
          bytes: 13,
          by: "gc",
          reason: expect.stringMatching(/^moved to the blob trash until /),
        }),
      ]);
    }
    // In each owner's trash (kind blob), nobody else's; a carol who never stored it cannot reach it.
    const carol = { kind: "user", id: "carol" } as const;
    for (const principal of [alice, bob]) {
      expect((await keeping.listTrash(principal)).items).toEqual([
        expect.objectContaining({ kind: "blob", id: both.hash, by: "gc", bytes: 13 }),
      ]);
    }
    expect((await keeping.listTrash(carol)).items).toEqual([]);
    await expectStowageError(keeping.restoreFromTrash(carol, "blob", both.hash), "NOT_FOUND", "NOT_IN_TRASH");
    await expectStowageError(keeping.purgeFromTrash(carol, "blob", both.hash), "NOT_FOUND", "NOT_IN_TRASH");
    for (const hostile of ["../x", both.hash.toUpperCase(), "", `${both.hash}/..`]) {
      await expectStowageError(keeping.restoreFromTrash(alice, "blob", hostile), "INVALID_INPUT");
    }
    // Its owners' marks stayed: restored by one, both read it again.
    const item = await keeping.restoreFromTrash(alice, "blob", both.hash);
    expect(item).toMatchObject({ kind: "blob", id: both.hash });
    expect(await keeping.ownedBlobs(alice).get(both.hash)).toEqual(text("stored by two"));
    expect(await keeping.ownedBlobs(bob).has(both.hash)).toBe(true);
    expect((await keeping.listTrash(bob)).items).toEqual([]);

    // Taken again: bob gives his claim up (his mark goes, audited by him); alice's stays.
    await new Promise((resolve) => setTimeout(resolve, 5));
    await keeping.collectGarbage({ graceMs: 0, timestampSlackMs: 0, trashMs: 7 * DAY_MS });
    await keeping.purgeFromTrash(bob, "blob", both.hash, { by: "key:bob1" });
    expect((await keeping.listTrash(bob)).items).toEqual([]);
    expect((await keeping.tenant(bob).deletionAudit.list()).rows.at(-1)).toMatchObject({
      kind: "blobs",
      id: both.hash,
      by: "key:bob1",
      reason: expect.stringContaining("purged from the trash by its owner"),
    });
    expect((await keeping.listTrash(alice)).items.map((thing) => thing.id)).toEqual([both.hash]);
    // A process whose trash days are 0 purges it, audited for alice, the owner left.
    const { stowage } = processOn(dir);
    expect(await stowage.collectGarbage({ graceMs: 0, timestampSlackMs: 0 })).toMatchObject({ purged: 1 });
    expect(await stowage.blobs.restoreCollected(both.hash)).toBe(false);
    expect((await stowage.tenant(alice).deletionAudit.list()).rows.at(-1)).toMatchObject({
      kind: "blobs",
      id: both.hash,
      by: "gc",
      reason: expect.stringContaining("purged from the blob trash"),
    });
    for (const principal of [alice, bob])
      expect(await stowage.ownedBlobs(principal).has(both.hash)).toBe(false);
    expect((await stowage.listTrash(alice)).items).toEqual([]);
  });
});
