import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { collectGarbage } from "@stowage/blob-store";
import { createMemoryNotifier, type ObjectStore } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { createMemoryPromptMetricsLog } from "@stowage/hot-state";
import { compressChunks, createMemorySessionBlobRepository } from "@stowage/sessions";
import { createFsObjectStore } from "@stowage/storage-fs";
import { tempDirectory } from "@stowage/test-support";
import { textItem } from "@stowage/thread-items";
import { createUploadService } from "@stowage/uploads";
import { describe, expect, it } from "vitest";
import { createStowage, DEFAULT_STORES, defineStore, type StowageOptions } from "../src/index.js";

const base = await tempDirectory("stowage-tenancy-");
const alice = { kind: "user", id: "alice" } as const;
const bob = { kind: "user", id: "bob" } as const;
const text = (value: string) => new TextEncoder().encode(value);
const ref = (hash: string) => `blob:sha256:${hash}`;

/** A deployment on the file system, as an embedder without our app would build it. */
function deploymentOn(dir: string) {
  // Made by the deployment at its start: garbage collection refuses a missing one.
  mkdirSync(join(dir, "agent-sessions"), { recursive: true });
  const shared = createFsObjectStore({ root: join(dir, "shared") });
  const uploadStore = createFsObjectStore({
    root: join(dir, "uploads"),
    directUrls: { baseUrl: "http://127.0.0.1:9/direct", secret: "s".repeat(32) },
  });
  const stowageOptions = {
    shared,
    notifier: createMemoryNotifier(),
    agentSessionsDir: join(dir, "agent-sessions"),
    sessionBlobs: createMemorySessionBlobRepository(),
    promptMetricsFor: () => createMemoryPromptMetricsLog(),
    // These tests are of the deletion itself; the trash before it is test/trash.test.ts's.
    trashDays: 0,
  };
  const uploads = createUploadService({
    store: uploadStore,
    sessionExists: (principal, sessionId) => stowage.registeredSessions(principal).has(sessionId),
  });
  const stowage = createStowage({ ...stowageOptions, uploads });
  return { shared, uploadStore, uploads, stowage, options: { ...stowageOptions, uploads } };
}

/** A store an embedder adds: notes per session, in the shared store, holding blob refs. */
function notesStore(shared: ObjectStore, prefix: string) {
  return {
    async write(sessionId: string, note: string) {
      await shared.put(`${prefix}${sessionId}/${randomUUID()}.txt`, text(note));
    },
    async count(sessionId: string) {
      return (await shared.list({ prefix: `${prefix}${sessionId}/` })).items.length;
    },
    async deleteSession(sessionId: string) {
      let deleted = 0;
      for await (const item of shared.iterate({ prefix: `${prefix}${sessionId}/` })) {
        await shared.delete(item.key);
        deleted++;
      }
      return deleted;
    },
  };
}

const NOTES = defineStore({
  prefix: "notes/",
  open: ({ deployment, namespace }) => notesStore(deployment.shared, `notes/${namespace}/`),
  deleteSession: (notes, sessionId) => notes.deleteSession(sessionId),
});

describe("a store added to the table", () => {
  it("is opened in each principal's namespace, deleted with its session, and protected by garbage collection", async () => {
    const dir = join(base, randomUUID());
    const { options } = deploymentOn(dir);
    const stowage = createStowage({ ...options, stores: { ...DEFAULT_STORES, notes: NOTES } });
    const sessionId = randomUUID();
    await stowage.tenant(alice).registeredSessions.register(sessionId);
    const kept = (await stowage.blobs.put(text("a screenshot the note points at"))).hash;
    await stowage.tenant(alice).notes.write(sessionId, `see ${ref(kept)}`);
    await stowage.tenant(bob).notes.write(sessionId, "bob's note of his own session with the same id");

    const collect = () =>
      collectGarbage({ blobs: stowage.blobs, roots: stowage.blobRoots(), graceMs: 0, timestampSlackMs: 0 });
    const first = await collect();
    expect(first.rootRefsBySource).toMatchObject({ notes: 1 });
    expect(await stowage.blobs.has(kept)).toBe(true);

    const report = await stowage.deleteSession(alice, sessionId);
    expect(report.deleted).toMatchObject({ notes: 1, threads: 0, sessionBlobs: 0 });
    expect(await stowage.tenant(alice).notes.count(sessionId)).toBe(0);
    expect(await stowage.tenant(bob).notes.count(sessionId)).toBe(1);
    await collect();
    expect(await stowage.blobs.has(kept)).toBe(false);
  });

  it("is refused where its prefix overlaps another store's or the deployment's own records", () => {
    const { options } = deploymentOn(join(base, randomUUID()));
    const overlapping = (prefix: string) =>
      createStowage({ ...options, stores: { ...DEFAULT_STORES, notes: { ...NOTES, prefix } } });
    for (const prefix of ["threads/", "threads/notes/", "blobs/", "api-keys/x/", "Notes/", "notes", "../"]) {
      expect(() => overlapping(prefix), prefix).toThrowError(
        expect.objectContaining({ code: "INVALID_INPUT" }),
      );
    }
    expect(() =>
      createStowage({
        ...options,
        stores: { ...DEFAULT_STORES, blobs: NOTES },
      } as unknown as StowageOptions<never>),
    ).toThrowError(expect.objectContaining({ code: "INVALID_INPUT" }));
  });

  it("without a prefix must name its roots: a row with neither is refused", () => {
    const { options } = deploymentOn(join(base, randomUUID()));
    const { prefix: _none, ...rootless } = NOTES;
    expect(() =>
      createStowage({
        ...options,
        stores: { ...DEFAULT_STORES, notes: rootless },
      } as unknown as StowageOptions<never>),
    ).toThrowError(expect.objectContaining({ code: "INVALID_INPUT" }));
  });
});

describe("deleteSession", () => {
  it("empties every default store of the session, and only of that session and principal", async () => {
    const { stowage, uploadStore } = deploymentOn(join(base, randomUUID()));
    const sessionId = randomUUID();
    const other = randomUUID();
    for (const principal of [alice, bob]) {
      const tenant = stowage.tenant(principal);
      for (const id of [sessionId, other]) {
        await tenant.registeredSessions.register(id);
        await tenant.threads.post({ jobId: id, alias: "main" }, textItem("hello"));
        await tenant.hotState
          .dispatcherFor(id)
          .write({ session_id: id, objective: "x" }, { expectedVersion: 0 });
        await tenant.sessionBlobs.create({
          requestId: "req-1",
          sessionId: id,
          agentType: "claude-code",
          codec: "gzip",
          blob: await compressChunks("gzip", [text("{}\n")]),
          rawSizeBytes: 3,
        });
        // Its capture recorded under a request of its own, and a restore under another.
        const entry = { sessionId: id, agent: "claude-code", fileCount: 1, rawBytes: 3, storedBytes: 3 };
        const at = new Date().toISOString();
        await tenant.sessionActivity.record("capture", {
          ...entry,
          requestId: `cap-${id}`,
          durationMs: 1,
          at,
        });
        await tenant.sessionActivity.record("restore", {
          ...entry,
          requestId: `res-${id}`,
          durationMs: 1,
          at,
        });
        await tenant.agentSessions.create(id);
        // Its Agent SDK transcript (the SDK session id is the session's), with a subagent's.
        await tenant.agentSdkSessions.append({ projectKey: "-app", sessionId: id }, [
          { type: "user", uuid: id },
        ]);
        await tenant.agentSdkSessions.append({ projectKey: "-app", sessionId: id, subpath: "subagents/a" }, [
          { type: "user" },
        ]);
        await uploadStore.put(`sessions/${principal.kind}/${principal.id}/${id}/session.json`, text("{}"));
      }
    }
    const report = await stowage.deleteSession(alice, sessionId);
    expect(report).toEqual({
      sessionId,
      deleted: {
        hotState: undefined,
        uploads: { deletedObjects: 1, deletedBytes: 2 },
        threads: 1,
        promptMetrics: undefined,
        sessionBlobs: 1,
        sessionActivity: 2,
        langgraphCheckpoints: undefined,
        openaiAgentsSessions: false,
        agentSdkSessions: { transcripts: 1, deletedBytes: expect.any(Number) },
        agentSessions: true,
      },
    });
    expect(report.deleted.agentSdkSessions).toMatchObject({ deletedBytes: expect.toSatisfy((n) => n > 0) });
    const tenant = stowage.tenant(alice);
    expect(await tenant.registeredSessions.state(sessionId)).toBeNull();
    expect(await tenant.hotState.reader.latest(sessionId)).toBeNull();
    expect(await tenant.sessionBlobs.getBySessionId(sessionId)).toBeNull();
    expect((await tenant.agentSessions.list()).map((s) => s.sessionId)).toEqual([other]);
    expect(await tenant.agentSdkSessions.load({ projectKey: "-app", sessionId })).toBeNull();
    expect(await tenant.agentSdkSessions.listSubkeys({ projectKey: "-app", sessionId })).toEqual([]);
    expect((await tenant.agentSdkSessions.listSessions("-app")).map((s) => s.sessionId)).toEqual([other]);
    expect(await stowage.tenant(bob).agentSdkSessions.load({ projectKey: "-app", sessionId })).toHaveLength(
      1,
    );
    // The other session, and bob's session of the same id, are untouched.
    expect(await tenant.hotState.reader.latest(other)).not.toBeNull();
    expect(await stowage.tenant(bob).hotState.reader.latest(sessionId)).not.toBeNull();
    expect(await stowage.tenant(bob).sessionBlobs.getBySessionId(sessionId)).not.toBeNull();
    expect(await tenant.sessionActivity.read(`cap-${sessionId}`)).toEqual({
      lastCapture: null,
      lastRestore: null,
    });
    expect((await tenant.sessionActivity.read(`cap-${other}`)).lastCapture).toMatchObject({
      sessionId: other,
    });
    expect((await stowage.tenant(bob).sessionActivity.read(`res-${sessionId}`)).lastRestore).toMatchObject({
      sessionId,
    });
    expect(await readdir(join(uploadStore.root, "sessions/user/bob"))).toHaveLength(2);
    await expectStowageError(stowage.deleteSession(alice, sessionId), "NOT_FOUND", "SESSION_NOT_FOUND");
  });

  it("another principal's session, or none, is NOT_FOUND and nothing changes", async () => {
    const { stowage } = deploymentOn(join(base, randomUUID()));
    const sessionId = randomUUID();
    await stowage.tenant(bob).registeredSessions.register(sessionId);
    await expectStowageError(stowage.deleteSession(alice, sessionId), "NOT_FOUND", "SESSION_NOT_FOUND");
    expect(await stowage.tenant(bob).registeredSessions.has(sessionId)).toBe(true);
  });

  it("a claimed session is deleted only with its dispatcher's token, and a refusal changes nothing", async () => {
    const { stowage } = deploymentOn(join(base, randomUUID()));
    const sessionId = randomUUID();
    const tenant = stowage.tenant(alice);
    await tenant.registeredSessions.register(sessionId);
    const { token } = await tenant.hotState.claimDispatcher(sessionId);
    await tenant.threads.post({ jobId: sessionId, alias: "main" }, textItem("kept"));
    for (const dispatcherToken of [undefined, "not the token"]) {
      await expectStowageError(
        stowage.deleteSession(alice, sessionId, dispatcherToken === undefined ? {} : { dispatcherToken }),
        "FORBIDDEN",
        "NOT_DISPATCHER",
      );
    }
    expect(await tenant.registeredSessions.state(sessionId)).toBe("registered");
    expect(await tenant.threads.thread({ jobId: sessionId, alias: "main" })).not.toBeNull();
    await stowage.deleteSession(alice, sessionId, { dispatcherToken: token });
    expect(await tenant.registeredSessions.state(sessionId)).toBeNull();
  });
});

describe("blobRoots", () => {
  it("names one source per store that holds refs", () => {
    const { stowage } = deploymentOn(join(base, randomUUID()));
    expect(stowage.blobRoots().map((source) => source.name)).toEqual([
      "registry",
      "hotState",
      "uploads",
      "threads",
      "sessionBlobs",
      "langgraphCheckpoints",
      "openaiAgentsSessions",
      "agentSdkSessions",
      "agentSessions",
    ]);
  });

  it("refuses, where the shared store is shared across hosts, unless every host's sessions are covered", () => {
    const { options } = deploymentOn(join(base, randomUUID()));
    const stowage = createStowage({ ...options, sharedAcrossHosts: true });
    expect(() => stowage.blobRoots()).toThrowError(expect.objectContaining({ reason: "ROOTS_NOT_SHARED" }));
    expect(stowage.blobRoots({ singleHost: true })).toHaveLength(9);
    expect(stowage.blobRoots({ otherAgentSessionsDirs: ["/mnt/host-2/agent-sessions"] })).toHaveLength(9);
  });
});

describe("sweep", () => {
  it("runs every store's expiry and reports each", async () => {
    const { stowage } = deploymentOn(join(base, randomUUID()));
    const run = { removed: 0, durationMs: expect.any(Number) };
    // The audits' own pruning runs on the first sweep of a process, then once a day.
    expect(await stowage.sweep()).toEqual({
      uploads: run,
      sessionBlobs: run,
      agentSdkSessions: run,
      trash: run,
      deletionAudit: run,
    });
    expect(await stowage.sweep()).toEqual({
      uploads: run,
      sessionBlobs: run,
      agentSdkSessions: run,
      trash: run,
    });
  });
});

describe("a deployment without a part a store needs", () => {
  it("fails when a principal's store is opened, naming what is missing; a table without the store works", async () => {
    const dir = join(base, randomUUID());
    const shared = createFsObjectStore({ root: join(dir, "shared") });
    const options = {
      shared,
      notifier: createMemoryNotifier(),
      agentSessionsDir: join(dir, "agent-sessions"),
    };
    expect(() => createStowage(options).tenant(alice)).toThrowError(
      expect.objectContaining({ code: "INVALID_INPUT" }),
    );
    const { uploads: _u, sessionBlobs: _s, promptMetrics: _p, ...readOnly } = DEFAULT_STORES;
    const stowage = createStowage({ ...options, stores: readOnly });
    const sessionId = randomUUID();
    await stowage.tenant(alice).registeredSessions.register(sessionId);
    expect((await stowage.deleteSession(alice, sessionId, { trashDays: 0 })).deleted).toEqual({
      hotState: undefined,
      threads: 0,
      sessionActivity: 0,
      langgraphCheckpoints: undefined,
      openaiAgentsSessions: false,
      agentSdkSessions: { transcripts: 0, deletedBytes: 0 },
      agentSessions: false,
    });
  });
});
