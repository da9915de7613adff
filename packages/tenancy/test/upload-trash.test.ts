// The trash of uploads past retention: an upload that expires is not deleted but waits in its
// owner's trash for the deployment's trash days (listed, counted in the quota, restorable byte
// for byte), then the sweep deletes it with a `retention` audit row; a purge on demand has its own
// row; another principal sees none of it; hostile ids are refused. Ages are set on the files.
import { randomUUID } from "node:crypto";
import { utimes } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Principal } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { type DeploymentProcess, processOn } from "./support/deployment-process.js";

const base = await tempDirectory("stowage-upload-trash-");
const alice: Principal = { kind: "user", id: "alice" };
const bob: Principal = { kind: "user", id: "bob" };
const DAY_MS = 24 * 3600 * 1000;
const text = (value: string) => new TextEncoder().encode(value);

/** A deployment keeping uploads 30 days, with the default 7 trash days. */
const deploymentOn = (dir = join(base, randomUUID())) => processOn(dir, { uploadRetentionDays: 30 });

/** An upload of `principal`'s registered session, last changed `ageDays` ago. */
async function uploadAged(
  { stowage, uploadStore }: DeploymentProcess,
  principal: Principal,
  sessionId: string,
  filename: string,
  content: string,
  ageDays: number,
) {
  const registered = stowage.tenant(principal).registeredSessions;
  if (!(await registered.has(sessionId))) await registered.register(sessionId);
  const key = `sessions/${principal.kind}/${principal.id}/${sessionId}/artifacts/${filename}`;
  await uploadStore.put(key, text(content));
  const at = new Date(Date.now() - ageDays * DAY_MS);
  await utimes(fileURLToPath(uploadStore.uriFor!(key)), at, at);
  return key;
}

describe("the trash of uploads past retention", () => {
  it("an expired upload is listed in its owner's trash, counted, and restored byte for byte", async () => {
    const deployment = deploymentOn();
    const { stowage, uploads, uploadStore } = deployment;
    const sessionId = randomUUID();
    const key = await uploadAged(deployment, alice, sessionId, "shot.png", "an old screenshot", 31);
    await uploadAged(deployment, alice, sessionId, "notes.txt", "fresh", 1);
    expect((await uploads.listUploads(alice, sessionId)).map((upload) => upload.filename)).toEqual([
      "notes.txt",
    ]);
    const { items, bytes } = await stowage.listTrash(alice);
    expect(items).toEqual([
      {
        kind: "upload",
        id: `${sessionId}/shot.png`,
        trashedAt: expect.any(String),
        purgeAfter: expect.any(String),
        by: "retention",
        bytes: 17,
      },
    ]);
    expect(bytes).toBe(17);
    expect(Date.parse(items[0]!.purgeAfter) - Date.parse(items[0]!.trashedAt)).toBe(7 * DAY_MS);
    // Still in the session's room: a trash counts against its owner's storage.
    expect(await uploads.usage(alice, sessionId)).toMatchObject({ usedBytes: 17 + 5 });
    // Another principal: nothing listed, and the same id is not theirs to restore or purge.
    expect((await stowage.listTrash(bob)).items).toEqual([]);
    await expectStowageError(stowage.restoreFromTrash(bob, "upload", `${sessionId}/shot.png`), "NOT_FOUND");
    await expectStowageError(stowage.purgeFromTrash(bob, "upload", `${sessionId}/shot.png`), "NOT_FOUND");

    const restored = await stowage.restoreFromTrash(alice, "upload", `${sessionId}/shot.png`);
    expect(restored).toMatchObject({ kind: "upload", id: `${sessionId}/shot.png`, bytes: 17 });
    expect((await uploads.listUploads(alice, sessionId)).map((upload) => upload.filename)).toEqual([
      "notes.txt",
      "shot.png",
    ]);
    expect(await uploadStore.get(key)).toEqual(text("an old screenshot"));
    expect((await stowage.listTrash(alice)).items).toEqual([]);
    await expectStowageError(
      stowage.restoreFromTrash(alice, "upload", `${sessionId}/shot.png`),
      "NOT_FOUND",
      "NOT_IN_TRASH",
    );
    // Its retention started again: the sweep leaves it.
    expect(await stowage.sweep()).toMatchObject({ uploads: { removed: 0 } });
    expect(await uploadStore.get(key)).toEqual(text("an old screenshot"));
  });

  it("the sweep deletes an upload only after its stay in the trash, with a retention audit row", async () => {
    const deployment = deploymentOn();
    const { stowage, uploadStore, uploads } = deployment;
    const sessionId = randomUUID();
    const waiting = await uploadAged(
      deployment,
      alice,
      sessionId,
      "waiting.png",
      "two days in the trash",
      32,
    );
    const gone = await uploadAged(deployment, alice, sessionId, "gone.png", "past the trash", 38);
    expect(await stowage.sweep()).toMatchObject({ uploads: { removed: 1 } });
    expect(await uploadStore.head(gone)).toBeNull();
    expect(await uploadStore.get(waiting)).toEqual(text("two days in the trash"));
    expect((await stowage.listTrash(alice)).items.map((item) => item.id)).toEqual([
      `${sessionId}/waiting.png`,
    ]);
    expect(await uploads.usage(alice, sessionId)).toMatchObject({ usedBytes: 21, objects: 1 });
    expect((await stowage.tenant(alice).deletionAudit.list()).rows).toEqual([
      expect.objectContaining({
        kind: "uploads",
        id: `${sessionId}/gone.png`,
        bytes: 14,
        by: "retention",
        reason: expect.stringContaining("past the retention of 30 days and 7 days in the trash"),
      }),
    ]);
  });

  it("a purge deletes it now, releases its quota and writes its audit row by the caller", async () => {
    const deployment = deploymentOn();
    const { stowage, uploadStore, uploads } = deployment;
    const sessionId = randomUUID();
    const key = await uploadAged(deployment, alice, sessionId, "shot.png", "an old screenshot", 31);
    const purged = await stowage.purgeFromTrash(alice, "upload", `${sessionId}/shot.png`, { by: "key:k1" });
    expect(purged).toEqual({ sessionId, deleted: { uploads: { deletedObjects: 1, deletedBytes: 17 } } });
    expect(await uploadStore.head(key)).toBeNull();
    expect(await uploads.usage(alice, sessionId)).toMatchObject({ usedBytes: 0, objects: 0 });
    expect((await stowage.tenant(alice).deletionAudit.list()).rows).toEqual([
      expect.objectContaining({ kind: "uploads", id: `${sessionId}/shot.png`, bytes: 17, by: "key:k1" }),
    ]);
    await expectStowageError(
      stowage.purgeFromTrash(alice, "upload", `${sessionId}/shot.png`),
      "NOT_FOUND",
      "NOT_IN_TRASH",
    );
  });

  it("a session in the trash as a whole holds its expired uploads: not listed, not restored apart", async () => {
    const deployment = deploymentOn();
    const { stowage, uploadStore } = deployment;
    const sessionId = randomUUID();
    const key = await uploadAged(deployment, alice, sessionId, "shot.png", "an old screenshot", 31);
    await stowage.deleteSession(alice, sessionId);
    expect((await stowage.listTrash(alice)).items.map(({ kind, id }) => [kind, id])).toEqual([
      ["session", sessionId],
    ]);
    await expectStowageError(
      stowage.restoreFromTrash(alice, "upload", `${sessionId}/shot.png`),
      "NOT_FOUND",
      "NOT_IN_TRASH",
    );
    await expectStowageError(
      stowage.purgeFromTrash(alice, "upload", `${sessionId}/shot.png`),
      "NOT_FOUND",
      "NOT_IN_TRASH",
    );
    expect(await uploadStore.get(key)).toEqual(text("an old screenshot"));
  });

  it("refuses hostile ids with INVALID_INPUT and changes nothing", async () => {
    const deployment = deploymentOn();
    const { stowage, uploadStore } = deployment;
    const sessionId = randomUUID();
    const key = await uploadAged(deployment, alice, sessionId, "shot.png", "an old screenshot", 31);
    for (const id of [
      "../x/shot.png",
      `${sessionId}/../shot.png`,
      `${sessionId}/a/b.png`,
      `${sessionId}/`,
      "/shot.png",
      "no-slash",
      "",
      `${"x".repeat(300)}/shot.png`,
      `${sessionId}/shot\u0000.png`,
      7,
    ]) {
      await expectStowageError(stowage.restoreFromTrash(alice, "upload", id as string), "INVALID_INPUT");
      await expectStowageError(stowage.purgeFromTrash(alice, "upload", id as string), "INVALID_INPUT");
    }
    expect(await uploadStore.get(key)).toEqual(text("an old screenshot"));
    expect((await stowage.listTrash(alice)).items).toHaveLength(1);
  });

  it("refuses a deployment whose sweep and upload service go by two retentions", () => {
    const { uploads } = deploymentOn();
    expect(() => processOn(join(base, randomUUID()), { uploadRetentionDays: 10, uploads })).toThrowError(
      expect.objectContaining({ code: "INVALID_INPUT", reason: "UPLOAD_RETENTION_MISMATCH" }),
    );
  });
});

describe("a session's uploads deleted into the trash (deleteSessionUploads)", () => {
  it("wait there by who deleted them, with no retention too; the sweep purges them after the trash days, audited", async () => {
    // No retention; trash days over at once, so the next sweep finds them due.
    const deployment = processOn(join(base, randomUUID()), { trashDays: 1e-9 });
    const { stowage, uploads, uploadStore } = deployment;
    const sessionId = randomUUID();
    const key = await uploadAged(deployment, alice, sessionId, "shot.png", "a screenshot", 1);
    await expectStowageError(
      stowage.deleteSessionUploads(alice, sessionId, { by: "key:k1", trashDays: 3 }),
      "INVALID_INPUT",
      "TRASH_DAYS_FIXED",
    );
    await expectStowageError(stowage.deleteSessionUploads(bob, sessionId, { by: "key:k2" }), "NOT_FOUND");
    await expectStowageError(stowage.deleteSessionUploads(alice, sessionId, { by: "a\nb" }), "INVALID_INPUT");
    const report = await stowage.deleteSessionUploads(alice, sessionId, { by: "key:k1" });
    expect(report.trash).toMatchObject({ uploads: 1, bytes: 12 });
    expect(await uploads.listUploads(alice, sessionId)).toEqual([]);
    expect((await stowage.listTrash(alice)).items).toEqual([
      expect.objectContaining({ kind: "upload", id: `${sessionId}/shot.png`, by: "key:k1", bytes: 12 }),
    ]);
    expect((await stowage.listTrash(bob)).items).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect((await stowage.sweep()).uploads).toMatchObject({ removed: 1 });
    expect(await uploadStore.head(key)).toBeNull();
    expect((await stowage.listTrash(alice)).items).toEqual([]);
    expect(
      (await stowage.tenant(alice).deletionAudit.list()).rows.map((row) => [row.by, row.reason]),
    ).toEqual([
      ["key:k1", expect.stringContaining("moved to the trash")],
      ["key:k1", expect.stringContaining("purged from the trash: its session's uploads were deleted")],
    ]);
  });
});
