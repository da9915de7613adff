import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { utimes } from "node:fs/promises";
import { join } from "node:path";
import { createMemoryNotifier } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { createMemoryPromptMetricsLog } from "@stowage/hot-state";
import { compressChunks, createMemorySessionBlobRepository } from "@stowage/sessions";
import { createFsObjectStore } from "@stowage/storage-fs";
import { tempDirectory } from "@stowage/test-support";
import { createUploadService } from "@stowage/uploads";
import { describe, expect, it } from "vitest";
import { createStowage } from "../src/index.js";

const base = await tempDirectory("stowage-expiring-");
const alice = { kind: "user", id: "alice" } as const;
const bob = { kind: "user", id: "bob" } as const;
const DAY_MS = 24 * 3600 * 1000;
const text = (value: string) => new TextEncoder().encode(value);

function deployment(extra: { uploadRetentionDays?: number; maxExpiryDays?: number } = {}) {
  const dir = join(base, randomUUID());
  mkdirSync(join(dir, "agent-sessions"), { recursive: true });
  const uploadStore = createFsObjectStore({
    root: join(dir, "uploads"),
    directUrls: { baseUrl: "http://127.0.0.1:9/direct", secret: "s".repeat(32) },
  });
  const uploads = createUploadService({
    store: uploadStore,
    sessionExists: (principal, sessionId) => stowage.registeredSessions(principal).has(sessionId),
    ...(extra.uploadRetentionDays === undefined ? {} : { retentionDays: extra.uploadRetentionDays }),
  });
  const stowage = createStowage({
    shared: createFsObjectStore({ root: join(dir, "shared") }),
    notifier: createMemoryNotifier(),
    agentSessionsDir: join(dir, "agent-sessions"),
    sessionBlobs: createMemorySessionBlobRepository(),
    promptMetricsFor: () => createMemoryPromptMetricsLog(),
    uploads,
    ...extra,
  });
  return { stowage, uploadStore };
}

async function storeSession(stowage: ReturnType<typeof deployment>["stowage"], expiresAt: Date | null) {
  const sessionId = randomUUID();
  await stowage.tenant(alice).sessionBlobs.create({
    requestId: `req-${sessionId.slice(0, 8)}`,
    sessionId,
    agentType: "claude-code",
    codec: "gzip",
    blob: await compressChunks("gzip", [text("{}\n")]),
    rawSizeBytes: 3,
    expiresAt,
  });
  return sessionId;
}

describe("expiring", () => {
  it("lists what expires within the window, soonest first: stored sessions and uploads under retention", async () => {
    const { stowage, uploadStore } = deployment({ uploadRetentionDays: 10 });
    const inTwoDays = await storeSession(stowage, new Date(Date.now() + 2 * DAY_MS));
    const inOneDay = await storeSession(stowage, new Date(Date.now() + DAY_MS));
    await storeSession(stowage, new Date(Date.now() + 5 * DAY_MS));
    await storeSession(stowage, null);
    const sessionId = randomUUID();
    await stowage.tenant(alice).registeredSessions.register(sessionId);
    const key = `sessions/user/alice/${sessionId}/artifacts/old.txt`;
    await uploadStore.put(key, text("old"));
    // Last changed 7.5 days ago: 2.5 days of its 10 left.
    const changed = new Date(Date.now() - 7.5 * DAY_MS);
    await utimes(join(uploadStore.root, key), changed, changed);
    await uploadStore.put(`sessions/user/alice/${sessionId}/artifacts/new.txt`, text("new"));

    const found = await stowage.expiring(alice, 3 * DAY_MS);
    expect(found.map((thing) => [thing.kind, thing.id])).toEqual([
      ["sessionBlobs", inOneDay],
      ["sessionBlobs", inTwoDays],
      ["uploads", `${sessionId}/old.txt`],
    ]);
    expect(found[2]).toMatchObject({ bytes: 3 });
    expect(Math.abs(Date.parse(found[2]!.expiresAt) - (changed.getTime() + 10 * DAY_MS))).toBeLessThan(2000);
    expect(await stowage.expiring(bob, 3 * DAY_MS)).toEqual([]);
    await expectStowageError(stowage.expiring(alice, -1), "INVALID_INPUT");
  });

  it("without a retention, uploads never expire and are not listed", async () => {
    const { stowage, uploadStore } = deployment();
    const sessionId = randomUUID();
    await stowage.tenant(alice).registeredSessions.register(sessionId);
    await uploadStore.put(`sessions/user/alice/${sessionId}/artifacts/a.txt`, text("a"));
    expect(await stowage.expiring(alice, 3650 * DAY_MS)).toEqual([]);
  });

  it("extends a stored session within the deployment's maximum (30 days by default), and no further", async () => {
    const { stowage } = deployment();
    const sessionId = await storeSession(stowage, new Date(Date.now() + DAY_MS));
    const later = new Date(Date.now() + 20 * DAY_MS);
    expect(await stowage.extendExpiry(alice, "sessionBlobs", sessionId, later)).toEqual({
      kind: "sessionBlobs",
      id: sessionId,
      expiresAt: later.toISOString(),
      changed: 1,
    });
    expect((await stowage.tenant(alice).sessionBlobs.getBySessionId(sessionId))?.expiresAt).toEqual(later);
    const tooLate = await expectStowageError(
      stowage.extendExpiry(alice, "sessionBlobs", sessionId, new Date(Date.now() + 31 * DAY_MS)),
      "INVALID_INPUT",
      "EXPIRY_TOO_LATE",
    );
    expect(tooLate.details).toMatchObject({ limitDays: 30 });
    await expectStowageError(
      stowage.extendExpiry(alice, "sessionBlobs", sessionId, new Date(Date.now() - 1000)),
      "INVALID_INPUT",
    );
    await expectStowageError(
      stowage.extendExpiry(alice, "uploads", `${sessionId}/a.txt`, later),
      "INVALID_INPUT",
      "EXPIRY_NOT_EXTENSIBLE",
    );
    for (const kind of ["hotState", "../x", ""]) {
      await expectStowageError(stowage.extendExpiry(alice, kind, sessionId, later), "INVALID_INPUT");
    }
    for (const id of ["../x", "a/b", "x".repeat(300)]) {
      await expectStowageError(stowage.extendExpiry(alice, "sessionBlobs", id, later), "INVALID_INPUT");
    }
    // Another principal's session, or none, is NOT_FOUND and unchanged.
    await expectStowageError(stowage.extendExpiry(bob, "sessionBlobs", sessionId, later), "NOT_FOUND");
    await expectStowageError(stowage.extendExpiry(alice, "sessionBlobs", randomUUID(), later), "NOT_FOUND");
  });

  it("takes the deployment's maxExpiryDays", async () => {
    const { stowage } = deployment({ maxExpiryDays: 2 });
    const sessionId = await storeSession(stowage, new Date(Date.now() + DAY_MS));
    await expectStowageError(
      stowage.extendExpiry(alice, "sessionBlobs", sessionId, new Date(Date.now() + 3 * DAY_MS)),
      "INVALID_INPUT",
      "EXPIRY_TOO_LATE",
    );
    await stowage.extendExpiry(alice, "sessionBlobs", sessionId, new Date(Date.now() + DAY_MS + 60_000));
  });
});
