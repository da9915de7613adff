// The trash of stored sessions: a capture that expires is not deleted but waits in its owner's
// trash for the deployment's trash days (listed, counted, restorable byte for byte, its chunks kept
// through garbage collection), then a sweep purges it with a `ttl` audit row; a purge on demand
// has its own row; another principal sees none of it; hostile kinds and ids are refused.
import { randomBytes, randomUUID } from "node:crypto";
import { join } from "node:path";
import type { Principal } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { chunkSessionBlob, readSessionFiles } from "@stowage/sessions";
import { sampleSessionBlob } from "@stowage/sessions/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { type DeploymentProcess, processOn } from "./support/deployment-process.js";

const base = await tempDirectory("stowage-stored-session-trash-");
const alice: Principal = { kind: "user", id: "alice" };
const bob: Principal = { kind: "user", id: "bob" };
const DAY_MS = 24 * 3600 * 1000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS);

/**
 * A Codex capture of `principal`, kept as chunks in its blobs (as the app stores one), stored for
 * `requestId` with `expiresAt`: the sample rollout with 3 KB of random text, so that it is chunked.
 */
async function storeCapture(
  { stowage }: DeploymentProcess,
  principal: Principal,
  expiresAt: Date,
  sessionId = randomUUID(),
  requestId = `req-${randomUUID()}`,
) {
  const tenant = stowage.tenant(principal);
  const sample = sampleSessionBlob({ sessionId, agent: "codex", note: randomBytes(1500).toString("hex") });
  const chunked = await chunkSessionBlob(sample, { blobs: tenant.blobs });
  const { codec, blob, rawSizeBytes, storedBytes } = chunked;
  await tenant.sessionBlobs.create({
    requestId,
    sessionId,
    agentType: "codex",
    codec,
    blob,
    rawSizeBytes,
    storedBytes,
    expiresAt,
  });
  return { sessionId, requestId, sample, storedBytes };
}

describe("the trash of stored sessions (expired captures)", () => {
  it("an expired capture is listed in its owner's trash, counted, and restored byte for byte after a garbage collection", async () => {
    const process = processOn(join(base, randomUUID()));
    const { stowage } = process;
    const expired = await storeCapture(process, alice, daysAgo(1));
    const live = await storeCapture(process, alice, new Date(Date.now() + DAY_MS));
    const tenant = stowage.tenant(alice);
    expect(await tenant.sessionBlobs.getBySessionId(expired.sessionId)).toBeNull();
    const { items, bytes } = await stowage.listTrash(alice);
    expect(items).toEqual([
      {
        kind: "storedSession",
        id: expired.sessionId,
        trashedAt: expect.any(String),
        purgeAfter: expect.any(String),
        by: "ttl",
        bytes: expired.storedBytes,
      },
    ]);
    expect(bytes).toBe(expired.storedBytes);
    // Kept the deployment's 7 trash days from when it expired.
    expect(Date.parse(items[0]!.purgeAfter) - Date.parse(items[0]!.trashedAt)).toBe(7 * DAY_MS);
    expect(
      (await tenant.sessionBlobs.list()).sessions.map((s: { sessionId: string }) => s.sessionId),
    ).toEqual([live.sessionId]);

    // Its chunks are roots while it waits: a collection that takes every unreferenced blob keeps them.
    await new Promise((resolve) => setTimeout(resolve, 5));
    await stowage.collectGarbage({ graceMs: 0, timestampSlackMs: 0 });

    const restored = await stowage.restoreFromTrash(alice, "storedSession", expired.sessionId);
    expect(restored).toMatchObject({
      kind: "storedSession",
      id: expired.sessionId,
      bytes: expired.storedBytes,
    });
    const back = await tenant.sessionBlobs.getLatestForRequest(expired.requestId);
    expect(back).not.toBeNull();
    expect(back!.expiresAt!.getTime()).toBeGreaterThan(Date.now() + 6 * DAY_MS);
    const [original, read] = await Promise.all([
      readSessionFiles(expired.sample),
      readSessionFiles(back!, { blobs: tenant.blobs }),
    ]);
    expect(read.files).toEqual(original.files);
    expect((await stowage.listTrash(alice)).items).toEqual([]);
    await expectStowageError(
      stowage.restoreFromTrash(alice, "storedSession", expired.sessionId),
      "NOT_FOUND",
      "NOT_IN_TRASH",
    );
  });

  it("a sweep purges it once the trash days are over, with a ttl row in the audit; one still in its grace stays", async () => {
    const process = processOn(join(base, randomUUID()));
    const { stowage } = process;
    const old = await storeCapture(process, alice, daysAgo(8));
    const recent = await storeCapture(process, alice, daysAgo(2));
    expect((await stowage.listTrash(alice)).items.map((item) => item.id).sort()).toEqual(
      [old.sessionId, recent.sessionId].sort(),
    );
    expect(await stowage.sweep()).toMatchObject({ sessionBlobs: { removed: 1 } });
    expect((await stowage.listTrash(alice)).items.map((item) => item.id)).toEqual([recent.sessionId]);
    expect((await stowage.tenant(alice).deletionAudit.list()).rows).toEqual([
      expect.objectContaining({ kind: "sessionBlobs", id: old.sessionId, by: "ttl", bytes: old.storedBytes }),
    ]);
    await expectStowageError(
      stowage.restoreFromTrash(alice, "storedSession", old.sessionId),
      "NOT_FOUND",
      "NOT_IN_TRASH",
    );
    // Idempotent: the one in its grace is still there after another sweep.
    expect(await stowage.sweep()).toMatchObject({ sessionBlobs: { removed: 0 } });
    expect((await stowage.listTrash(alice)).items.map((item) => item.id)).toEqual([recent.sessionId]);
  });

  it("a deployment with trashDays 0 deletes an expired capture at the first sweep, as before the trash", async () => {
    const process = processOn(join(base, randomUUID()), { trashDays: 0 });
    const expired = await storeCapture(process, alice, new Date(Date.now() - 1000));
    expect((await process.stowage.listTrash(alice)).items.map((item) => item.id)).toEqual([
      expired.sessionId,
    ]);
    expect(await process.stowage.sweep()).toMatchObject({ sessionBlobs: { removed: 1 } });
    expect((await process.stowage.listTrash(alice)).items).toEqual([]);
  });

  it("a purge on demand deletes every request's expired capture of the session now, audited by who asked; a capture stored since stays", async () => {
    const process = processOn(join(base, randomUUID()));
    const { stowage } = process;
    const first = await storeCapture(process, alice, daysAgo(1));
    await storeCapture(process, alice, daysAgo(3), first.sessionId);
    const since = await storeCapture(process, alice, new Date(Date.now() + DAY_MS), first.sessionId);
    const [item] = (await stowage.listTrash(alice)).items;
    expect(item).toMatchObject({ kind: "storedSession", id: first.sessionId });
    const report = await stowage.purgeFromTrash(alice, "storedSession", first.sessionId, { by: "key:k1" });
    expect(report).toEqual({ sessionId: first.sessionId, deleted: { sessionBlobs: 2 } });
    expect((await stowage.tenant(alice).deletionAudit.list()).rows).toEqual([
      expect.objectContaining({
        kind: "sessionBlobs",
        id: first.sessionId,
        by: "key:k1",
        bytes: item!.bytes,
      }),
    ]);
    expect((await stowage.listTrash(alice)).items).toEqual([]);
    expect((await stowage.tenant(alice).sessionBlobs.getLatestForRequest(since.requestId))?.sessionId).toBe(
      first.sessionId,
    );
    await expectStowageError(
      stowage.purgeFromTrash(alice, "storedSession", first.sessionId),
      "NOT_FOUND",
      "NOT_IN_TRASH",
    );
  });

  it("another principal sees none of it: not listed, and its restore or purge is NOT_FOUND", async () => {
    const process = processOn(join(base, randomUUID()));
    const { stowage } = process;
    const expired = await storeCapture(process, alice, daysAgo(1));
    expect((await stowage.listTrash(bob)).items).toEqual([]);
    for (const attempt of [
      stowage.restoreFromTrash(bob, "storedSession", expired.sessionId),
      stowage.purgeFromTrash(bob, "storedSession", expired.sessionId),
    ]) {
      await expectStowageError(attempt, "NOT_FOUND", "NOT_IN_TRASH");
    }
    expect((await stowage.listTrash(alice)).items.map((item) => item.id)).toEqual([expired.sessionId]);
  });

  it("a session in the trash as a whole holds its expired captures: listed once, as the session", async () => {
    const process = processOn(join(base, randomUUID()));
    const { stowage } = process;
    const expired = await storeCapture(process, alice, daysAgo(1));
    await stowage.tenant(alice).registeredSessions.register(expired.sessionId);
    await stowage.deleteSession(alice, expired.sessionId);
    expect((await stowage.listTrash(alice)).items.map((item) => [item.kind, item.id])).toEqual([
      ["session", expired.sessionId],
    ]);
    await expectStowageError(
      stowage.restoreFromTrash(alice, "storedSession", expired.sessionId),
      "NOT_FOUND",
      "NOT_IN_TRASH",
    );
  });

  it("two processes: one restores while the other sweeps; the capture is either back or purged and audited, never both or neither", async () => {
    const dir = join(base, randomUUID());
    const first = processOn(dir);
    const second = processOn(dir);
    const expired = await storeCapture(first, alice, daysAgo(7 + 1 / 24));
    const [restore] = await Promise.allSettled([
      first.stowage.restoreFromTrash(alice, "storedSession", expired.sessionId),
      second.stowage.sweep(),
    ]);
    const back = await first.stowage.tenant(alice).sessionBlobs.getBySessionId(expired.sessionId);
    const audited = (await first.stowage.tenant(alice).deletionAudit.list()).rows;
    if (restore.status === "fulfilled") {
      expect(back?.sessionId).toBe(expired.sessionId);
      expect(audited).toEqual([]);
    } else {
      expect(back).toBeNull();
      expect(audited).toEqual([
        expect.objectContaining({ kind: "sessionBlobs", id: expired.sessionId, by: "ttl" }),
      ]);
    }
  });

  it("refuses hostile kinds and ids with INVALID_INPUT", async () => {
    const { stowage } = processOn(join(base, randomUUID()));
    for (const id of ["../x", "a/b", "", "x".repeat(300), 7]) {
      await expectStowageError(
        stowage.restoreFromTrash(alice, "storedSession", id as string),
        "INVALID_INPUT",
      );
      await expectStowageError(stowage.purgeFromTrash(alice, "storedSession", id as string), "INVALID_INPUT");
    }
    for (const kind of ["stored-session", "StoredSession", "uploads", "__proto__", "constructor", ""]) {
      await expectStowageError(
        stowage.restoreFromTrash(alice, kind, randomUUID()),
        "INVALID_INPUT",
        "UNKNOWN_KIND",
      );
    }
  });
});

describe("deleting a request's stored sessions (deleteSessionBlobs)", () => {
  const inADay = () => new Date(Date.now() + DAY_MS);

  it("moves them to the trash by who asked: no read finds them, GC keeps their chunks, a restore in another process brings them back byte for byte", async () => {
    const dir = join(base, randomUUID());
    const first = processOn(dir);
    const second = processOn(dir);
    const requestId = `req-${randomUUID()}`;
    const a = await storeCapture(first, alice, inADay(), randomUUID(), requestId);
    const b = await storeCapture(first, alice, inADay(), randomUUID(), requestId);
    const other = await storeCapture(first, alice, inADay());
    const bobs = await storeCapture(first, bob, inADay(), randomUUID(), requestId);
    const report = await first.stowage.deleteSessionBlobs(alice, requestId, { by: "key:k1" });
    expect(report).toEqual({ requestId, trash: { records: 2, purgeAfter: expect.any(String) } });
    expect(Math.abs(Date.parse(report.trash!.purgeAfter) - Date.now() - 7 * DAY_MS)).toBeLessThan(60_000);
    const tenant = second.stowage.tenant(alice);
    expect(await tenant.sessionBlobs.getLatestForRequest(requestId)).toBeNull();
    expect(await tenant.sessionBlobs.getBySessionId(a.sessionId)).toBeNull();
    expect((await tenant.sessionBlobs.getBySessionId(other.sessionId))?.sessionId).toBe(other.sessionId);
    // Bob's capture for the same request id is his, and stays.
    expect((await second.stowage.tenant(bob).sessionBlobs.getLatestForRequest(requestId))?.sessionId).toBe(
      bobs.sessionId,
    );
    const { items } = await second.stowage.listTrash(alice);
    expect(items.map((item) => [item.id, item.by, item.bytes]).sort()).toEqual(
      [
        [a.sessionId, "key:k1", a.storedBytes],
        [b.sessionId, "key:k1", b.storedBytes],
      ].sort(),
    );
    expect((await second.stowage.listTrash(bob)).items).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await second.stowage.collectGarbage({ graceMs: 0, timestampSlackMs: 0 });
    await second.stowage.restoreFromTrash(alice, "storedSession", a.sessionId);
    const back = await first.stowage.tenant(alice).sessionBlobs.getBySessionId(a.sessionId);
    const [original, read] = await Promise.all([
      readSessionFiles(a.sample),
      readSessionFiles(back!, { blobs: tenant.blobs }),
    ]);
    expect(read.files).toEqual(original.files);
    expect(back?.trashedBy).toBeUndefined();
    // The other stays in the trash; purging it writes a row by whoever purged.
    await first.stowage.purgeFromTrash(alice, "storedSession", b.sessionId, { by: "cli" });
    expect((await first.stowage.listTrash(alice)).items).toEqual([]);
    const rows = (await tenant.deletionAudit.list()).rows;
    expect(rows.map((row) => [row.id, row.by, row.reason])).toEqual([
      [requestId, "key:k1", expect.stringContaining("moved to the trash until")],
      [b.sessionId, "cli", expect.stringContaining("deleted by key:k1")],
    ]);
  });

  it("with trashDays 0 deletes them now, with an audit row; another trash time is refused; nothing live is NOT_FOUND", async () => {
    const process = processOn(join(base, randomUUID()));
    const { stowage } = process;
    const kept = await storeCapture(process, alice, inADay());
    await expectStowageError(
      stowage.deleteSessionBlobs(alice, kept.requestId, { trashDays: 3 }),
      "INVALID_INPUT",
      "TRASH_DAYS_FIXED",
    );
    await expectStowageError(stowage.deleteSessionBlobs(bob, kept.requestId), "NOT_FOUND");
    expect(await stowage.deleteSessionBlobs(alice, kept.requestId, { trashDays: 0, by: "cli" })).toEqual({
      requestId: kept.requestId,
      deleted: 1,
    });
    expect((await stowage.listTrash(alice)).items).toEqual([]);
    await expectStowageError(stowage.deleteSessionBlobs(alice, kept.requestId), "NOT_FOUND");
    // An expired capture (already in the trash by its TTL) is not deleted again.
    const expired = await storeCapture(process, alice, daysAgo(1));
    await expectStowageError(stowage.deleteSessionBlobs(alice, expired.requestId), "NOT_FOUND");
    expect((await stowage.listTrash(alice)).items).toEqual([
      expect.objectContaining({ id: expired.sessionId, by: "ttl" }),
    ]);
    expect((await stowage.tenant(alice).deletionAudit.list()).rows).toEqual([
      expect.objectContaining({
        kind: "sessionBlobs",
        id: kept.requestId,
        by: "cli",
        report: { removed: 1 },
      }),
    ]);
  });

  it("refuses hostile request ids, trash days and who, deleting nothing", async () => {
    const process = processOn(join(base, randomUUID()));
    const { stowage } = process;
    const kept = await storeCapture(process, alice, inADay());
    for (const requestId of ["../x", "a/b", "", "x".repeat(300), 7, null]) {
      await expectStowageError(stowage.deleteSessionBlobs(alice, requestId as string), "INVALID_INPUT");
    }
    for (const trashDays of [-1, Number.NaN, 401, "7"]) {
      await expectStowageError(
        stowage.deleteSessionBlobs(alice, kept.requestId, { trashDays: trashDays as number }),
        "INVALID_INPUT",
      );
    }
    for (const by of ["", "a/b", "x".repeat(300)]) {
      await expectStowageError(stowage.deleteSessionBlobs(alice, kept.requestId, { by }), "INVALID_INPUT");
    }
    expect((await stowage.tenant(alice).sessionBlobs.getLatestForRequest(kept.requestId))?.sessionId).toBe(
      kept.sessionId,
    );
    expect((await stowage.tenant(alice).deletionAudit.list()).rows).toEqual([]);
  });
});
