// The Agent SDK SessionStore row of the default table (`agentSdkSessions`): the SDK's own
// conformance and Stowage's (trash included) through a tenant, in clear and sealed; what its
// `delete` takes is in the principal's trash (kind `transcript`), restored exactly, purged by
// the principal or by the deployment's sweep once its days are over, each step audited; another
// principal sees none of it; hostile ids refused; two processes on one data directory.
import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { collectGarbage } from "@stowage/blob-store";
import { createMemoryNotifier, type ObjectStore, type Principal } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import type { SessionStoreEntry } from "@stowage/sessions";
import { describeSessionStoreConformance } from "@stowage/sessions/testing";
import { createFsObjectStore } from "@stowage/storage-fs";
import { encodePng, tempDirectory } from "@stowage/test-support";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createStowage, DEFAULT_STORES } from "../src/index.js";

const base = await tempDirectory("stowage-tenancy-agent-sdk-");
const alice: Principal = { kind: "user", id: "alice" };
const bob: Principal = { kind: "user", id: "bob" };
const DAY_MS = 24 * 3600 * 1000;
const encryptionKey = randomBytes(32).toString("base64");

// The default table without the rows that need a database or an upload service.
const { uploads: _u, sessionBlobs: _s, promptMetrics: _p, ...stores } = DEFAULT_STORES;

/** A deployment on one data directory; `open()` again is another process of it. */
function deployment(options: { sealed?: boolean; trashDays?: number } = {}) {
  const dir = join(base, randomUUID());
  mkdirSync(join(dir, "agent-sessions"), { recursive: true });
  const open = (wrap: (store: ObjectStore) => ObjectStore = (store) => store) =>
    createStowage({
      shared: wrap(createFsObjectStore({ root: join(dir, "shared") })),
      notifier: createMemoryNotifier(),
      agentSessionsDir: join(dir, "agent-sessions"),
      stores,
      ...(options.trashDays === undefined ? {} : { trashDays: options.trashDays }),
      ...(options.sealed ? { encryption: { env: { STOWAGE_ENCRYPTION_KEY: encryptionKey } } } : {}),
    });
  return { dir, stowage: open(), open };
}

describeSessionStoreConformance({
  name: "a tenant's agentSdkSessions (fs deployment)",
  createStore: () => deployment().stowage.tenant(alice).agentSdkSessions,
  trash: true,
});

describeSessionStoreConformance({
  name: "a tenant's agentSdkSessions (fs deployment, encrypted at rest)",
  createStore: () => deployment({ sealed: true }).stowage.tenant(alice).agentSdkSessions,
  trash: true,
});

const key = { projectKey: "-workspace-app", sessionId: "3f1d8c2a-6b1e-4f7a-9c55-0d2a1b7e9f10" };
const png = encodePng(32, 32, (x, y) => [(x * 73 + y * 151) % 256, (x * y * 31) % 256, (x + y * 7) % 256]);
/** A user turn with a screenshot, as Claude Code mirrors it, and an assistant turn holding a secret. */
const turns = (): SessionStoreEntry[] => [
  {
    type: "user",
    uuid: randomUUID(),
    message: {
      role: "user",
      content: [
        { type: "text", text: "what does the screenshot show?" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: png.toString("base64") } },
      ],
    },
  },
  {
    type: "assistant",
    uuid: randomUUID(),
    message: {
      role: "assistant",
      content: [{ type: "text", text: "token ghp_SECRETSECRETSECRETSECRETSECRETSE12" }],
    },
  },
];

/** Every file below `dir`, read whole. */
async function filesBelow(dir: string): Promise<Buffer[]> {
  const files: Buffer[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) files.push(await readFile(join(entry.parentPath, entry.name)));
  }
  return files;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("the principal's trash holds what the Agent SDK deleted", () => {
  it("lists it (kind transcript), restores it exactly, and purges it with audit rows", async () => {
    const { stowage } = deployment();
    const transcripts = stowage.tenant(alice).agentSdkSessions;
    const appended = turns();
    await transcripts.append(key, appended);
    await transcripts.append({ ...key, subpath: "subagents/agent-1" }, [
      { type: "user", uuid: randomUUID() },
    ]);
    const before = await transcripts.load(key);
    expect(before).toEqual(appended);

    await transcripts.delete(key);
    expect(await transcripts.load(key)).toBeNull();
    const [trashed, ...more] = await transcripts.listTrash(key.projectKey);
    expect(more).toEqual([]);
    const listed = await stowage.listTrash(alice);
    expect(listed.items).toEqual([
      {
        kind: "transcript",
        id: `${key.projectKey}/${trashed!.trashId}`,
        trashedAt: trashed!.trashedAt,
        purgeAfter: trashed!.purgeAfter,
        by: "agent-sdk",
        bytes: trashed!.bytes,
      },
    ]);
    expect(Date.parse(trashed!.purgeAfter) - Date.parse(trashed!.trashedAt)).toBe(7 * DAY_MS);
    expect(listed.bytes).toBe(trashed!.bytes);
    expect(trashed!.bytes).toBeGreaterThan(0);
    // Bob: none of it listed, restored or purged.
    const id = listed.items[0]!.id;
    expect(await stowage.listTrash(bob)).toEqual({ items: [], bytes: 0 });
    await expectStowageError(stowage.restoreFromTrash(bob, "transcript", id), "NOT_FOUND", "NOT_IN_TRASH");
    await expectStowageError(stowage.purgeFromTrash(bob, "transcript", id), "NOT_FOUND", "NOT_IN_TRASH");

    expect(await stowage.restoreFromTrash(alice, "transcript", id)).toEqual(listed.items[0]);
    expect(await transcripts.load(key)).toEqual(before);
    expect(await transcripts.listSubkeys(key)).toEqual(["subagents/agent-1"]);
    expect(await stowage.listTrash(alice)).toEqual({ items: [], bytes: 0 });

    await transcripts.delete(key, { by: "key:k9" });
    const [again] = (await stowage.listTrash(alice)).items;
    const report = await stowage.purgeFromTrash(alice, "transcript", again!.id, { by: "key:k1" });
    expect(report).toEqual({
      sessionId: key.sessionId,
      deleted: { agentSdkSessions: { transcripts: 1, deletedBytes: again!.bytes } },
    });
    expect(await transcripts.load(key)).toBeNull();
    expect(await stowage.listTrash(alice)).toEqual({ items: [], bytes: 0 });
    await expectStowageError(
      stowage.restoreFromTrash(alice, "transcript", again!.id),
      "NOT_FOUND",
      "NOT_IN_TRASH",
    );
    const rows = (await stowage.tenant(alice).deletionAudit.list()).rows;
    const transcriptId = `${key.projectKey}/${key.sessionId}`;
    expect(rows.map(({ at: _at, ...row }) => row)).toEqual([
      {
        kind: "agentSdkSessions",
        id: transcriptId,
        by: "agent-sdk",
        reason: "moved to the trash for 7 days",
      },
      { kind: "agentSdkSessions", id: transcriptId, by: "key:k9", reason: "moved to the trash for 7 days" },
      {
        kind: "agentSdkSessions",
        id: transcriptId,
        bytes: again!.bytes,
        by: "key:k1",
        reason: "purged from the trash: asked by key:k1",
      },
    ]);
    expect((await stowage.tenant(bob).deletionAudit.list()).rows).toEqual([]);
  });

  it("the deployment's sweep purges it once its days are over, audited, and not before", async () => {
    const { stowage, open } = deployment({ trashDays: 2 });
    const transcripts = stowage.tenant(alice).agentSdkSessions;
    await transcripts.append(key, turns());
    const kept = { ...key, sessionId: randomUUID() };
    await transcripts.append(kept, turns());
    await transcripts.delete(key);
    const [trashed] = (await stowage.listTrash(alice)).items;
    expect(Date.parse(trashed!.purgeAfter) - Date.parse(trashed!.trashedAt)).toBe(2 * DAY_MS);
    expect((await stowage.sweep()).agentSdkSessions).toMatchObject({ removed: 0 });
    expect((await stowage.listTrash(alice)).items).toHaveLength(1);

    // Two days and a minute later, in another process of the deployment.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.parse(trashed!.purgeAfter) + 60_000);
    const other = open();
    expect((await other.sweep()).agentSdkSessions).toMatchObject({ removed: 1 });
    expect(await other.listTrash(alice)).toEqual({ items: [], bytes: 0 });
    expect((await other.sweep()).agentSdkSessions).toMatchObject({ removed: 0 });
    // The live transcript is untouched; the purge is in alice's audit.
    expect(await other.tenant(alice).agentSdkSessions.load(kept)).toHaveLength(2);
    const rows = (await other.tenant(alice).deletionAudit.list()).rows;
    expect(rows.at(-1)).toMatchObject({
      kind: "agentSdkSessions",
      id: `${key.projectKey}/${key.sessionId}`,
      bytes: trashed!.bytes,
      by: "agent-sdk",
      reason: "purged from the trash: its 2 days in the trash were over",
    });
  });

  it("trashDays 0 deletes at once, audited, with nothing in the trash", async () => {
    const { stowage } = deployment();
    const transcripts = stowage.tenant(alice).agentSdkSessions;
    await transcripts.append(key, turns());
    await transcripts.delete(key, { trashDays: 0, by: "cli" });
    expect(await transcripts.load(key)).toBeNull();
    expect(await stowage.listTrash(alice)).toEqual({ items: [], bytes: 0 });
    expect((await stowage.tenant(alice).deletionAudit.list()).rows).toMatchObject([
      { kind: "agentSdkSessions", by: "cli", reason: "deleted at once (trashDays 0)" },
    ]);
  });

  it("is another process's too: deleted in one, listed and restored in the other", async () => {
    const { stowage, open } = deployment();
    await stowage.tenant(alice).agentSdkSessions.append(key, turns());
    const before = await stowage.tenant(alice).agentSdkSessions.load(key);
    await stowage.tenant(alice).agentSdkSessions.delete(key);
    const other = open();
    const [item] = (await other.listTrash(alice)).items;
    expect(item).toMatchObject({ kind: "transcript", by: "agent-sdk" });
    await other.restoreFromTrash(alice, "transcript", item!.id);
    expect(await stowage.tenant(alice).agentSdkSessions.load(key)).toEqual(before);
  });

  it("a process that dies while it moves a transcript to the trash loses nothing: another lists, deletes again, restores all, and its sweep purges both", async () => {
    const { stowage, open } = deployment({ trashDays: 1 });
    const sent = Array.from({ length: 8 }, (_, i) => ({ type: "user", uuid: randomUUID(), n: i }));
    for (const entry of sent) await stowage.tenant(alice).agentSdkSessions.append(key, [entry]);
    let moves = 0;
    const dying = open((store) => ({
      ...store,
      move: async (from, to, options) => {
        if (++moves > 3) throw new Error("the process died");
        return store.move(from, to, options);
      },
    }));
    await expect(dying.tenant(alice).agentSdkSessions.delete(key)).rejects.toThrow("the process died");
    const other = open();
    const transcripts = other.tenant(alice).agentSdkSessions;
    // What moved is listed in alice's trash; what did not is deleted again.
    expect((await other.listTrash(alice)).items).toMatchObject([{ kind: "transcript", by: "agent-sdk" }]);
    await transcripts.delete(key);
    expect(await transcripts.load(key)).toBeNull();
    const [older, newer] = (await other.listTrash(alice)).items;
    await other.restoreFromTrash(alice, "transcript", newer!.id);
    await other.restoreFromTrash(alice, "transcript", older!.id);
    expect(await transcripts.load(key)).toEqual(sent);

    // Both halves in the trash again, and purged by the sweep once their day is over: nothing left.
    await transcripts.delete(key);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + DAY_MS + 60_000);
    expect((await open().sweep()).agentSdkSessions).toMatchObject({ removed: 1 });
    expect(await other.listTrash(alice)).toEqual({ items: [], bytes: 0 });
    const left = await other.shared.list({ prefix: "agent-sdk/user/alice/" });
    expect(left.items).toEqual([]);
  });

  it("keeps the images of a transcript in the trash through garbage collection, and lets them go once purged", async () => {
    const { stowage } = deployment({ trashDays: 1 });
    const transcripts = stowage.tenant(alice).agentSdkSessions;
    const appended = turns();
    // Appended, the image is held by the part; compacted, it is in the principal's blobs.
    for (const entry of appended) await transcripts.append(key, [entry]);
    await transcripts.compact(key);
    expect((await stowage.blobs.list()).items).toHaveLength(1);
    await transcripts.delete(key);
    const collect = () =>
      collectGarbage({ blobs: stowage.blobs, roots: stowage.blobRoots(), graceMs: 0, timestampSlackMs: 0 });
    expect((await collect()).deleted).toBe(0);
    const [item] = (await stowage.listTrash(alice)).items;
    await stowage.restoreFromTrash(alice, "transcript", item!.id);
    expect(await transcripts.load(key)).toEqual(appended);
    await transcripts.delete(key);
    const [again] = (await stowage.listTrash(alice)).items.filter((thing) => thing.kind === "transcript");
    await stowage.purgeFromTrash(alice, "transcript", again!.id);
    expect((await collect()).deleted).toBe(1);
  });

  it("is sealed at rest with the deployment: no plaintext of the transcript in any stored file", async () => {
    const { dir, stowage } = deployment({ sealed: true });
    const transcripts = stowage.tenant(alice).agentSdkSessions;
    const appended = turns();
    await transcripts.append(key, appended);
    await transcripts.delete({ ...key, sessionId: randomUUID() }).catch(() => {});
    expect(await transcripts.load(key)).toEqual(appended);
    const secret = Buffer.from("ghp_SECRETSECRETSECRETSECRETSECRETSE12");
    const prompt = Buffer.from("what does the screenshot show?");
    for (const bytes of await filesBelow(join(dir, "shared"))) {
      expect(bytes.includes(secret)).toBe(false);
      expect(bytes.includes(prompt)).toBe(false);
    }
  });
});

describe("a principal the row cannot serve, and hostile ids", () => {
  it("refuses every call of a principal whose id is too long for the store's keys, loudly", async () => {
    const { stowage } = deployment();
    const long: Principal = { kind: "user", id: "u".repeat(100) };
    const transcripts = stowage.tenant(long).agentSdkSessions;
    await expectStowageError(transcripts.append(key, turns()), "INVALID_INPUT", "PRINCIPAL_ID_TOO_LONG");
    await expectStowageError(transcripts.load(key), "INVALID_INPUT", "PRINCIPAL_ID_TOO_LONG");
    // The rest of the principal's trash still lists, and a session of it still deletes.
    expect(await stowage.listTrash(long)).toEqual({ items: [], bytes: 0 });
    const sessionId = randomUUID();
    await stowage.tenant(long).registeredSessions.register(sessionId);
    await stowage.deleteSession(long, sessionId, { trashDays: 0 });
  });

  it.each<[unknown, "INVALID_INPUT" | "NOT_FOUND"]>([
    ["", "INVALID_INPUT"],
    ["no-slash", "INVALID_INPUT"],
    ["/0000-abc", "INVALID_INPUT"],
    ["proj/", "INVALID_INPUT"],
    ["proj/a/b", "INVALID_INPUT"],
    ["../../x/y", "INVALID_INPUT"],
    ["proj/..", "INVALID_INPUT"],
    ["proj/a b", "INVALID_INPUT"],
    ["-workspace-app/\u0000", "INVALID_INPUT"],
    [`${"p".repeat(300)}/x`, "INVALID_INPUT"],
    [42, "INVALID_INPUT"],
    [null, "INVALID_INPUT"],
    ["-workspace-app/0000-unknown", "NOT_FOUND"],
  ])("transcript id %j: %s, nothing changes", async (id, code) => {
    const { stowage } = deployment();
    const transcripts = stowage.tenant(alice).agentSdkSessions;
    await transcripts.append(key, turns());
    await transcripts.delete(key);
    const listed = await stowage.listTrash(alice);
    await expectStowageError(stowage.restoreFromTrash(alice, "transcript", id as string), code);
    await expectStowageError(stowage.purgeFromTrash(alice, "transcript", id as string), code);
    expect(await stowage.listTrash(alice)).toEqual(listed);
    expect((await stowage.tenant(alice).deletionAudit.list()).rows).toHaveLength(1);
  });

  it.each([["key:k 1"], ["a\nforged row"], [""], ["x".repeat(129)]])(
    "a delete by %j is refused and deletes nothing",
    async (by) => {
      const { stowage } = deployment();
      const transcripts = stowage.tenant(alice).agentSdkSessions;
      await transcripts.append(key, turns());
      await expectStowageError(transcripts.delete(key, { by }), "INVALID_INPUT");
      expect(await transcripts.load(key)).toHaveLength(2);
      expect(await stowage.listTrash(alice)).toEqual({ items: [], bytes: 0 });
    },
  );
});
