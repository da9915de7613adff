// The trash of deleted sessions: delete → listed → unreachable → restored exactly; delete → purged
// after the grace period → gone from every store, quota released, audit row; two processes on
// one data directory; crashes between the steps; hostile inputs.
import { randomUUID } from "node:crypto";
import { appendFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import { emptyCheckpoint } from "@langchain/langgraph-checkpoint";
import { type ObjectStore, type Principal, StowageError, sha256Hex } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { compressChunks } from "@stowage/sessions";
import { tempDirectory } from "@stowage/test-support";
import { textItem } from "@stowage/thread-items";
import { describe, expect, it } from "vitest";
import { sweepTrash } from "../src/trash/sweep-trash.js";
import { type DeploymentProcess, processOn } from "./support/deployment-process.js";

const base = await tempDirectory("stowage-trash-");
const alice: Principal = { kind: "user", id: "alice" };
const bob: Principal = { kind: "user", id: "bob" };
const text = (value: string) => new TextEncoder().encode(value);
const DAY_MS = 24 * 3600 * 1000;
/** A grace period that is over as soon as it starts (86 µs): the sweep right after purges. */
const OVER_AT_ONCE = 1e-9;

type Process = DeploymentProcess;

/** The Agent SDK's key of the session's transcript (its SDK session id is the session's). */
const sdkKey = (sessionId: string, projectKey = "-workspace-app") => ({ projectKey, sessionId });
/** A LangGraph config naming the session's thread (its id is the session's). */
const threadConfig = (sessionId: string) => ({ configurable: { thread_id: sessionId, checkpoint_ns: "" } });
const checkpointMetadata = { source: "loop" as const, step: 0, parents: {} };

/** A process that dies as it writes a session's registration (its mark, or taking it off). */
const crashesOnRegistrationPut = (store: ObjectStore): ObjectStore => ({
  ...store,
  put: (key, body, options) =>
    key.startsWith("registered-sessions/")
      ? Promise.reject(new Error("crash"))
      : store.put(key, body, options),
});

/** A session with something in every store: what a restore must give back, byte for byte. */
async function fullSession({ stowage, uploads, uploadStore }: Process, principal = alice) {
  const sessionId = randomUUID();
  const tenant = stowage.tenant(principal);
  await tenant.registeredSessions.register(sessionId);
  await tenant.threads.post({ jobId: sessionId, alias: "main" }, textItem("the plan, step one"));
  await tenant.hotState
    .dispatcherFor(sessionId)
    .write({ session_id: sessionId, objective: "ship the trash" }, { expectedVersion: 0 });
  const blob = await compressChunks("gzip", [text('{"type":"user"}\n')]);
  await tenant.sessionBlobs.create({
    requestId: `req-${sessionId}`,
    sessionId,
    agentType: "claude-code",
    codec: "gzip",
    blob,
    rawSizeBytes: 16,
  });
  await tenant.sessionActivity.record("capture", {
    sessionId,
    requestId: `req-${sessionId}`,
    agent: "claude-code",
    fileCount: 1,
    rawBytes: 16,
    storedBytes: blob.byteLength,
    durationMs: 1,
    at: new Date().toISOString(),
  });
  const files = await tenant.agentSessions.create(sessionId);
  await appendFile(files.sessionFile, '{"type":"user","message":"hello"}\n');
  await tenant.openaiAgentsSessions.session(sessionId).addItems([{ role: "user", content: "hi" }]);
  const checkpoint = {
    ...emptyCheckpoint(),
    channel_values: { plan: "step one" },
    channel_versions: { plan: 1 },
  };
  const saved = await tenant.langgraphCheckpoints.put(
    threadConfig(sessionId),
    checkpoint,
    checkpointMetadata,
    checkpoint.channel_versions,
  );
  await tenant.langgraphCheckpoints.putWrites(saved, [["plan", "step two"]], "task-1");
  // The Agent SDK's transcript of the session (its SDK session id is the session's), in two projects.
  for (const projectKey of ["-workspace-app", "-workspace-lib"]) {
    await tenant.agentSdkSessions.append(sdkKey(sessionId, projectKey), [
      { type: "user", uuid: randomUUID(), message: { role: "user", content: "hello" } },
    ]);
  }
  // A real upload through a signed URL: 11 bytes in the quota ledger.
  const body = text("hello world");
  const grant = await uploads.requestUpload({
    principal,
    sessionId,
    filename: "notes.txt",
    contentType: "text/plain",
    fileSize: body.byteLength,
    sha256: sha256Hex(body),
  });
  const put = await uploadStore.handleDirectRequest!(
    new Request(grant.url, { method: "PUT", headers: grant.headers, body }),
  );
  expect(put.status).toBe(200);
  await uploads.completeUpload(principal, sessionId, "notes.txt");
  return { sessionId, blobBytes: blob.byteLength, sessionFile: files.sessionFile };
}

/** Everything the tenant reads of the session, as a route would. */
async function snapshot({ stowage, uploads }: Process, sessionId: string, principal = alice) {
  const tenant = stowage.tenant(principal);
  const record = await tenant.sessionBlobs.getBySessionId(sessionId);
  const files = await tenant.agentSessions.get(sessionId);
  return {
    registeredAt: await tenant.registeredSessions.registeredAt(sessionId),
    hotState: await tenant.hotState.reader.latest(sessionId),
    thread: (await tenant.threads.items({ jobId: sessionId, alias: "main" })).items,
    record: record && { ...record, blob: Buffer.from(record.blob).toString("base64") },
    byRequest: (await tenant.sessionBlobs.getLatestForRequest(`req-${sessionId}`))?.sessionId,
    activity: await tenant.sessionActivity.read(`req-${sessionId}`),
    sessionFile: await readFile(files.sessionFile, "utf8"),
    agentsItems: await tenant.openaiAgentsSessions.session(sessionId).getItems(),
    checkpoint: await tenant.langgraphCheckpoints.getTuple(threadConfig(sessionId)),
    transcript: await tenant.agentSdkSessions.load(sdkKey(sessionId)),
    otherProjectTranscript: await tenant.agentSdkSessions.load(sdkKey(sessionId, "-workspace-lib")),
    uploads: await uploads.listUploads(principal, sessionId),
    usage: await uploads.usage(principal, sessionId),
  };
}

/** Every way the session could be reached: each must fail or come back empty while it is in the trash. */
async function expectUnreachable({ stowage, uploads }: Process, sessionId: string, principal = alice) {
  const tenant = stowage.tenant(principal);
  expect(await tenant.registeredSessions.has(sessionId)).toBe(false);
  expect(await tenant.registeredSessions.registeredAt(sessionId)).toBeNull();
  await expectStowageError(tenant.agentSessions.get(sessionId), "NOT_FOUND", "SESSION_NOT_FOUND");
  expect((await tenant.agentSessions.list()).map((s: { sessionId: string }) => s.sessionId)).not.toContain(
    sessionId,
  );
  expect(await tenant.sessionBlobs.getBySessionId(sessionId)).toBeNull();
  expect(await tenant.sessionBlobs.getLatestForRequest(`req-${sessionId}`)).toBeNull();
  expect(
    (await tenant.sessionBlobs.list()).sessions.map((s: { sessionId: string }) => s.sessionId),
  ).not.toContain(sessionId);
  await expectStowageError(tenant.threads.items({ jobId: sessionId, alias: "main" }), "NOT_FOUND");
  await expectStowageError(
    tenant.threads.post({ jobId: sessionId, alias: "main" }, textItem("x")),
    "NOT_FOUND",
  );
  expect((await tenant.threads.threads()).threads.map((t: { jobId: string }) => t.jobId)).not.toContain(
    sessionId,
  );
  expect(await tenant.sessionActivity.read(`req-${sessionId}`)).toEqual({
    lastCapture: null,
    lastRestore: null,
  });
  expect(await tenant.hotState.reader.latest(sessionId)).toBeNull();
  expect(await tenant.hotState.reader.get(sessionId, 1)).toBeNull();
  await expectStowageError(tenant.hotState.claimDispatcher(sessionId), "NOT_FOUND", "SESSION_NOT_FOUND");
  await expectStowageError(
    tenant.hotState.dispatcherFor(sessionId).write({ session_id: sessionId, objective: "overwritten" }),
    "NOT_FOUND",
    "SESSION_NOT_FOUND",
  );
  await expectStowageError(uploads.listUploads(principal, sessionId), "NOT_FOUND");
  const agentsSession = tenant.openaiAgentsSessions.session(sessionId);
  expect(await agentsSession.getItems()).toEqual([]);
  await expectStowageError(agentsSession.addItems([{ role: "user", content: "x" }]), "NOT_FOUND");
  await expectStowageError(agentsSession.popItem(), "NOT_FOUND");
  await expectStowageError(agentsSession.clearSession(), "NOT_FOUND");
  const saver = tenant.langgraphCheckpoints;
  expect(await saver.getTuple(threadConfig(sessionId))).toBeUndefined();
  expect(await saver.get(threadConfig(sessionId))).toBeUndefined();
  const listed: string[] = [];
  for await (const tuple of saver.list({})) listed.push(tuple.config.configurable?.thread_id);
  for await (const tuple of saver.list(threadConfig(sessionId)))
    listed.push(tuple.config.configurable?.thread_id);
  expect(listed).not.toContain(sessionId);
  await expectStowageError(
    saver.put(threadConfig(sessionId), emptyCheckpoint(), checkpointMetadata, {}),
    "NOT_FOUND",
    "SESSION_NOT_FOUND",
  );
  await expectStowageError(
    saver.putWrites(
      { configurable: { ...threadConfig(sessionId).configurable, checkpoint_id: "c1" } },
      [],
      "t",
    ),
    "NOT_FOUND",
  );
  await expectStowageError(
    saver.getDeltaChannelHistory({ config: threadConfig(sessionId), channels: ["plan"] }),
    "NOT_FOUND",
  );
  const transcripts = tenant.agentSdkSessions;
  expect(await transcripts.load(sdkKey(sessionId))).toBeNull();
  expect(await transcripts.listSubkeys(sdkKey(sessionId))).toEqual([]);
  expect(
    (await transcripts.listSessions("-workspace-app")).map((s: { sessionId: string }) => s.sessionId),
  ).not.toContain(sessionId);
  expect(
    (await transcripts.listSessionSummaries("-workspace-app")).map((s: { sessionId: string }) => s.sessionId),
  ).not.toContain(sessionId);
  await expectStowageError(
    transcripts.append(sdkKey(sessionId), [{ type: "user" }]),
    "NOT_FOUND",
    "SESSION_NOT_FOUND",
  );
  await expectStowageError(transcripts.delete(sdkKey(sessionId)), "NOT_FOUND", "SESSION_NOT_FOUND");
  await expectStowageError(transcripts.compact(sdkKey(sessionId)), "NOT_FOUND", "SESSION_NOT_FOUND");
  await expectStowageError(tenant.uploads.deleteSession(sessionId), "NOT_FOUND", "SESSION_NOT_FOUND");
  await expectStowageError(tenant.sessionBlobs.deleteForRequest(`req-${sessionId}`), "NOT_FOUND");
  await expectStowageError(tenant.registeredSessions.register(sessionId), "CONFLICT", "SESSION_IN_TRASH");
}

describe("a session's deletion goes through the trash", () => {
  it("is listed with what it holds, unreachable everywhere, and restored exactly", async () => {
    const process = processOn(join(base, randomUUID()));
    const { stowage } = process;
    const { sessionId, blobBytes } = await fullSession(process);
    // What the session holds in the shared store, by the layout the README gives: its job's
    // threads, its hot-state versions, its LangGraph thread, its OpenAI Agents history and its
    // Agent SDK transcripts.
    let sharedBytes = 0;
    for (const prefix of [
      `threads/user/alice/index/${sessionId}/`,
      `threads/user/alice/items/${sessionId}/`,
      `threads/user/alice/full/${sessionId}/`,
      `hot-state/user/alice/${sessionId}/`,
      `langgraph/user/alice/${sessionId}/`,
      `openai-agents/user/alice/${sessionId}/`,
      `agent-sdk/user/alice/-workspace-app/${sessionId}/`,
      `agent-sdk/user/alice/-workspace-lib/${sessionId}/`,
    ]) {
      for (const item of (await process.shared.list({ prefix })).items) sharedBytes += item.size;
    }
    expect(sharedBytes).toBeGreaterThan(0);
    const before = await snapshot(process, sessionId);
    const startedAt = Date.now();
    const report = await stowage.deleteSession(alice, sessionId, { by: "key:k1" });
    expect(report.deleted).toEqual({});
    // 11 bytes of upload, the stored session's blob, what it holds in the shared store: still
    // counted against alice's storage.
    const bytes = 11 + blobBytes + sharedBytes;
    const item = { kind: "session", id: sessionId, by: "key:k1", bytes };
    expect(report.trash).toMatchObject(item);
    const purgeAfter = Date.parse(report.trash!.purgeAfter);
    expect(purgeAfter - Date.parse(report.trash!.trashedAt)).toBe(7 * DAY_MS);
    expect(Date.parse(report.trash!.trashedAt)).toBeGreaterThanOrEqual(startedAt);
    expect(await stowage.listTrash(alice)).toEqual({ items: [report.trash], bytes });
    expect(await stowage.listTrash(bob)).toEqual({ items: [], bytes: 0 });
    await expectUnreachable(process, sessionId);
    // Deleting it again, or bob restoring or purging it: NOT_FOUND, and nothing changes.
    await expectStowageError(stowage.deleteSession(alice, sessionId), "NOT_FOUND", "SESSION_IN_TRASH");
    await expectStowageError(
      stowage.restoreFromTrash(bob, "session", sessionId),
      "NOT_FOUND",
      "NOT_IN_TRASH",
    );
    await expectStowageError(stowage.purgeFromTrash(bob, "session", sessionId), "NOT_FOUND", "NOT_IN_TRASH");
    // A sweep within the grace period leaves it.
    expect((await stowage.sweep()).trash).toMatchObject({ removed: 0 });

    expect(await stowage.restoreFromTrash(alice, "session", sessionId)).toEqual(report.trash);
    expect(await snapshot(process, sessionId)).toEqual(before);
    expect(await stowage.listTrash(alice)).toEqual({ items: [], bytes: 0 });
    await expectStowageError(
      stowage.restoreFromTrash(alice, "session", sessionId),
      "NOT_FOUND",
      "NOT_IN_TRASH",
    );
    // Nothing was deleted, so nothing is in the audit.
    expect((await stowage.tenant(alice).deletionAudit.list()).rows).toEqual([]);
  });

  it("is purged by a sweep once its grace period is over: gone from every store, quota released, audited", async () => {
    const process = processOn(join(base, randomUUID()), { trashDays: OVER_AT_ONCE });
    const { stowage, uploads } = process;
    const { sessionId, sessionFile } = await fullSession(process);
    const kept = await fullSession(process);
    const keptBefore = await snapshot(process, kept.sessionId);
    await stowage.deleteSession(alice, sessionId, { by: "key:k1" });
    const swept = await stowage.sweep();
    expect(swept.trash).toMatchObject({ removed: 1 });
    expect(await stowage.listTrash(alice)).toEqual({ items: [], bytes: 0 });
    const tenant = stowage.tenant(alice);
    expect(await tenant.registeredSessions.state(sessionId)).toBeNull();
    expect(await tenant.hotState.reader.latest(sessionId)).toBeNull();
    expect(await tenant.sessionBlobs.getBySessionId(sessionId)).toBeNull();
    expect(await tenant.threads.thread({ jobId: sessionId, alias: "main" })).toBeNull();
    expect(await tenant.openaiAgentsSessions.session(sessionId).getItems()).toEqual([]);
    for (const prefix of [
      `langgraph/user/alice/${sessionId}/`,
      `openai-agents/user/alice/${sessionId}/`,
      `agent-sdk/user/alice/-workspace-app/${sessionId}/`,
      `agent-sdk/user/alice/-workspace-lib/${sessionId}/`,
    ])
      expect((await process.shared.list({ prefix })).items).toEqual([]);
    await expect(readFile(sessionFile)).rejects.toMatchObject({ code: "ENOENT" });
    // Registered anew (allowed once purged), it has no uploads and its quota holds nothing.
    await tenant.registeredSessions.register(sessionId);
    expect(await uploads.listUploads(alice, sessionId)).toEqual([]);
    expect(await uploads.usage(alice, sessionId)).toMatchObject({ usedBytes: 0, objects: 0 });
    // The audit: the session's row by who deleted it, and one per store that removed something.
    const rows = (await tenant.deletionAudit.list()).rows;
    expect(rows[0]).toMatchObject({ kind: "session", id: sessionId, by: "key:k1" });
    expect(rows[0]!.reason).toMatch(/^session purged from the trash \(deleted by key:k1 at /);
    expect(rows.map((row) => row.kind).sort()).toEqual(
      [
        "agentSdkSessions",
        "agentSessions",
        "openaiAgentsSessions",
        "session",
        "sessionActivity",
        "sessionBlobs",
        "threads",
        "uploads",
      ].sort(),
    );
    expect(rows.find((row) => row.kind === "uploads")).toMatchObject({ bytes: 11 });
    // The other session is untouched, and a second sweep finds nothing.
    expect(await snapshot(process, kept.sessionId)).toEqual(keptBefore);
    expect((await stowage.sweep()).trash).toMatchObject({ removed: 0 });
  });

  it("trashDays 0 (per call, or the deployment's) deletes at once", async () => {
    const process = processOn(join(base, randomUUID()));
    const { sessionId } = await fullSession(process);
    const report = await process.stowage.deleteSession(alice, sessionId, { trashDays: 0 });
    expect(report.trash).toBeUndefined();
    expect(report.deleted).toMatchObject({ threads: 1, sessionBlobs: 1, agentSessions: true });
    const atOnce = processOn(join(base, randomUUID()), { trashDays: 0 });
    const other = await fullSession(atOnce);
    expect((await atOnce.stowage.deleteSession(alice, other.sessionId)).trash).toBeUndefined();
    expect(await atOnce.stowage.tenant(alice).registeredSessions.state(other.sessionId)).toBeNull();
  });

  it("purges on request before the grace period, with the purger in the audit", async () => {
    const process = processOn(join(base, randomUUID()));
    const { sessionId } = await fullSession(process);
    await process.stowage.deleteSession(alice, sessionId, { by: "key:k1" });
    const report = await process.stowage.purgeFromTrash(alice, "session", sessionId, { by: "key:k2" });
    expect(report.deleted).toMatchObject({ threads: 1, sessionBlobs: 1, uploads: { deletedBytes: 11 } });
    expect((await process.stowage.tenant(alice).deletionAudit.list()).rows[0]).toMatchObject({
      kind: "session",
      by: "key:k2",
    });
    await expectStowageError(
      process.stowage.restoreFromTrash(alice, "session", sessionId),
      "NOT_FOUND",
      "NOT_IN_TRASH",
    );
  });

  it("a claimed session goes to the trash only with its dispatcher's token; its claim ends, and the purge needs none", async () => {
    const process = processOn(join(base, randomUUID()), { trashDays: OVER_AT_ONCE });
    const { stowage } = process;
    const sessionId = randomUUID();
    const tenant = stowage.tenant(alice);
    await tenant.registeredSessions.register(sessionId);
    const { token } = await tenant.hotState.claimDispatcher(sessionId);
    await expectStowageError(stowage.deleteSession(alice, sessionId), "FORBIDDEN", "NOT_DISPATCHER");
    expect(await stowage.listTrash(alice)).toEqual({ items: [], bytes: 0 });
    await stowage.deleteSession(alice, sessionId, { dispatcherToken: token });
    expect(await tenant.hotState.claimStatus(sessionId, { token })).toBe("unclaimed");
    expect((await stowage.sweep()).trash).toMatchObject({ removed: 1 });
    expect(await tenant.registeredSessions.state(sessionId)).toBeNull();
  });
});

describe("two processes on one trash", () => {
  it("deleting one session at once: one stay in the trash, listed once", async () => {
    const dir = join(base, randomUUID());
    const [one, two] = [processOn(dir), processOn(dir)];
    const { sessionId } = await fullSession(one);
    const reports = await Promise.allSettled([
      one.stowage.deleteSession(alice, sessionId),
      two.stowage.deleteSession(alice, sessionId),
    ]);
    expect(reports.some((report) => report.status === "fulfilled")).toBe(true);
    for (const report of reports) {
      if (report.status === "rejected") expect(StowageError.is(report.reason, "NOT_FOUND")).toBe(true);
    }
    const listed = await two.stowage.listTrash(alice);
    expect(listed.items.map((item) => item.id)).toEqual([sessionId]);
    await one.stowage.restoreFromTrash(alice, "session", sessionId);
    expect(await two.stowage.tenant(alice).registeredSessions.has(sessionId)).toBe(true);
  });

  it("a restore racing a purge: exactly one wins, the other is CONFLICT, nothing half done", async () => {
    for (let round = 0; round < 4; round++) {
      const dir = join(base, randomUUID());
      const [one, two] = [processOn(dir), processOn(dir)];
      const { sessionId } = await fullSession(one);
      const before = await snapshot(one, sessionId);
      await one.stowage.deleteSession(alice, sessionId);
      const [restored, purged] = await Promise.allSettled([
        one.stowage.restoreFromTrash(alice, "session", sessionId),
        two.stowage.purgeFromTrash(alice, "session", sessionId),
      ]);
      expect([restored.status, purged.status].sort()).toEqual(["fulfilled", "rejected"]);
      const loser = restored.status === "rejected" ? restored : (purged as PromiseRejectedResult);
      expect(StowageError.is(loser.reason, "CONFLICT")).toBe(true);
      if (restored.status === "fulfilled") {
        expect(await snapshot(two, sessionId)).toEqual(before);
      } else {
        expect(await two.stowage.tenant(alice).registeredSessions.state(sessionId)).toBeNull();
        expect(
          (await two.stowage.tenant(alice).deletionAudit.list()).rows.filter((r) => r.kind === "session"),
        ).toHaveLength(1);
      }
      expect(await one.stowage.listTrash(alice)).toEqual({ items: [], bytes: 0 });
    }
  });

  it("a crash between the trash entry and the session's mark: the session stays as it was, the entry goes", async () => {
    const dir = join(base, randomUUID());
    const healthy = processOn(dir);
    const { sessionId } = await fullSession(healthy);
    const before = await snapshot(healthy, sessionId);
    // The process dies as it marks the registration: its entry is written, the mark is not.
    const crashing = processOn(dir, {}, crashesOnRegistrationPut);
    await expect(crashing.stowage.deleteSession(alice, sessionId)).rejects.toThrow("crash");
    expect(await snapshot(healthy, sessionId)).toEqual(before);
    expect(await healthy.stowage.listTrash(alice)).toEqual({ items: [], bytes: 0 });
    const entries = async () => (await healthy.shared.list({ prefix: "trash/" })).items.length;
    expect(await entries()).toBe(1);
    // A sweep leaves a young entry (it may be a deletion under way), removes an old one.
    const sweepAt = (now: Date) =>
      sweepTrash(healthy.shared, healthy.stowage.stores, healthy.stowage.tenant, { now });
    expect(await sweepAt(new Date())).toBe(0);
    expect(await entries()).toBe(1);
    expect(await sweepAt(new Date(Date.now() + 16 * 60_000))).toBe(0);
    expect(await entries()).toBe(0);
    expect(await snapshot(healthy, sessionId)).toEqual(before);
  });

  it("a crash in the middle of a purge: a later sweep finishes it, with one audit row", async () => {
    const dir = join(base, randomUUID());
    const healthy = processOn(dir);
    const { sessionId } = await fullSession(healthy);
    await healthy.stowage.deleteSession(alice, sessionId, { by: "key:k1" });
    // The purging process dies as it deletes the session's threads.
    const crashing = processOn(dir, {}, (store) => ({
      ...store,
      delete: (key, options) =>
        key.startsWith("threads/") ? Promise.reject(new Error("crash")) : store.delete(key, options),
    }));
    await expect(crashing.stowage.purgeFromTrash(alice, "session", sessionId)).rejects.toThrow("crash");
    // Still listed (being purged): a restore now is CONFLICT, the purge was decided.
    expect((await healthy.stowage.listTrash(alice)).items.map((item) => item.id)).toEqual([sessionId]);
    await expectStowageError(
      healthy.stowage.restoreFromTrash(alice, "session", sessionId),
      "CONFLICT",
      "TRASH_PURGING",
    );
    const sweepAt = (now: Date) =>
      sweepTrash(healthy.shared, healthy.stowage.stores, healthy.stowage.tenant, { now });
    expect(await sweepAt(new Date())).toBe(0);
    expect(await sweepAt(new Date(Date.now() + 16 * 60_000))).toBe(1);
    const tenant = healthy.stowage.tenant(alice);
    expect(await tenant.registeredSessions.state(sessionId)).toBeNull();
    expect(await tenant.threads.thread({ jobId: sessionId, alias: "main" })).toBeNull();
    expect((await tenant.deletionAudit.list()).rows.filter((row) => row.kind === "session")).toHaveLength(1);
    expect((await healthy.shared.list({ prefix: "trash/" })).items).toEqual([]);
  });

  it("a crash in the middle of a restore: a later sweep finishes it, and everything is back", async () => {
    const dir = join(base, randomUUID());
    const healthy = processOn(dir);
    const { sessionId } = await fullSession(healthy);
    const before = await snapshot(healthy, sessionId);
    await healthy.stowage.deleteSession(alice, sessionId);
    const crashing = processOn(dir, {}, crashesOnRegistrationPut);
    await expect(crashing.stowage.restoreFromTrash(alice, "session", sessionId)).rejects.toThrow("crash");
    await expectStowageError(
      healthy.stowage.purgeFromTrash(alice, "session", sessionId),
      "CONFLICT",
      "TRASH_RESTORING",
    );
    await sweepTrash(healthy.shared, healthy.stowage.stores, healthy.stowage.tenant, {
      now: new Date(Date.now() + 16 * 60_000),
    });
    expect(await snapshot(healthy, sessionId)).toEqual(before);
    expect((await healthy.shared.list({ prefix: "trash/" })).items).toEqual([]);
  });
});

describe("hostile inputs to the trash", () => {
  const process = processOn(join(base, randomUUID()));
  const cases: [string, () => Promise<unknown>, string, string?][] = [
    [
      "an id with traversal",
      () => process.stowage.restoreFromTrash(alice, "session", "../bob/x"),
      "INVALID_INPUT",
    ],
    ["an id with a slash", () => process.stowage.purgeFromTrash(alice, "session", "a/b"), "INVALID_INPUT"],
    ["an empty id", () => process.stowage.restoreFromTrash(alice, "session", ""), "INVALID_INPUT"],
    [
      "a kind with traversal",
      () => process.stowage.restoreFromTrash(alice, "../session", "x"),
      "INVALID_INPUT",
      "UNKNOWN_KIND",
    ],
    [
      "an unknown kind",
      () => process.stowage.purgeFromTrash(alice, "uploads", "x"),
      "INVALID_INPUT",
      "UNKNOWN_KIND",
    ],
    [
      "an id never deleted",
      () => process.stowage.restoreFromTrash(alice, "session", randomUUID()),
      "NOT_FOUND",
      "NOT_IN_TRASH",
    ],
    [
      "negative trash days",
      () => process.stowage.deleteSession(alice, randomUUID(), { trashDays: -1 }),
      "INVALID_INPUT",
    ],
    [
      "NaN trash days",
      () => process.stowage.deleteSession(alice, randomUUID(), { trashDays: Number.NaN }),
      "INVALID_INPUT",
    ],
    [
      "trash days past a year",
      () => process.stowage.deleteSession(alice, randomUUID(), { trashDays: 366 }),
      "INVALID_INPUT",
    ],
    [
      "trash days as a string",
      () => process.stowage.deleteSession(alice, randomUUID(), { trashDays: "7" as never }),
      "INVALID_INPUT",
    ],
  ];
  for (const [name, act, code, reason] of cases) {
    it(`refuses ${name}`, async () => {
      await expectStowageError(act(), code as never, reason);
    });
  }

  it("a `by` that is no safe id (a newline forging an audit line, spaces, empty, 129 characters): INVALID_INPUT, nothing moves", async () => {
    const { sessionId } = await fullSession(process);
    const before = await snapshot(process, sessionId);
    for (const by of ["key:k1\nby: ttl", "an operator", "", "k".repeat(129), 7 as never]) {
      for (const trashDays of [7, 0]) {
        await expectStowageError(
          process.stowage.deleteSession(alice, sessionId, { by, trashDays }),
          "INVALID_INPUT",
        );
      }
      await expectStowageError(
        process.stowage.deleteSessionBlobs(alice, `req-${sessionId}`, { by }),
        "INVALID_INPUT",
      );
    }
    expect(await snapshot(process, sessionId)).toEqual(before);
    expect((await process.stowage.listTrash(alice)).items.map((item) => item.id)).not.toContain(sessionId);
  });

  it("another principal's trashed session: not listed, not restored, not purged; the owner's stays", async () => {
    const { sessionId } = await fullSession(process, bob);
    await process.stowage.deleteSession(bob, sessionId);
    expect((await process.stowage.listTrash(alice)).items).toEqual([]);
    await expectStowageError(process.stowage.restoreFromTrash(alice, "session", sessionId), "NOT_FOUND");
    await expectStowageError(process.stowage.purgeFromTrash(alice, "session", sessionId), "NOT_FOUND");
    expect((await process.stowage.listTrash(bob)).items.map((item) => item.id)).toEqual([sessionId]);
  });

  it("a restore of a purged session is NOT_FOUND, and the id registered anew is not touched", async () => {
    const { sessionId } = await fullSession(process);
    await process.stowage.deleteSession(alice, sessionId);
    await process.stowage.purgeFromTrash(alice, "session", sessionId);
    await process.stowage.tenant(alice).registeredSessions.register(sessionId);
    await expectStowageError(
      process.stowage.restoreFromTrash(alice, "session", sessionId),
      "NOT_FOUND",
      "NOT_IN_TRASH",
    );
    expect(await process.stowage.tenant(alice).registeredSessions.has(sessionId)).toBe(true);
  });
});
