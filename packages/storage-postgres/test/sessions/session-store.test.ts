import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { SessionKey, SessionStore, SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";
import { expectStowageError, seededRandom } from "@stowage/core/testing";
import { describeSessionStoreConformance, seededUuid } from "@stowage/sessions/testing";
import { runChild, tempDirectory } from "@stowage/test-support";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { rowsOf } from "../../src/database.js";
import { createPostgresSessionStore } from "../../src/sessions/session-store.js";
import { describeBackends } from "../backends.js";
import { storeEntries } from "../store-entries.js";

// Most entries one append takes, on every SessionStore backend (the @stowage/sessions README).
const MAX_APPEND_ENTRIES = 10_000;

// The SDK reads CLAUDE_CONFIG_DIR once per process; vitest runs this file in its own fork.
const claudeConfigDir = join(await tempDirectory("stowage-pg-session-store-"), ".claude");
process.env.CLAUDE_CONFIG_DIR = claudeConfigDir;
const { foldSessionSummary, InMemorySessionStore } = await import("@anthropic-ai/claude-agent-sdk");

const byId = <T extends { sessionId: string }>(items: T[]) =>
  [...items].sort((a, b) => (a.sessionId < b.sessionId ? -1 : 1));

/** Everything a SessionStore can say about a project, with our clock's mtimes left out. */
async function observe(store: SessionStore, projectKey: string, sessionIds: string[]) {
  const sessions = byId(await store.listSessions!(projectKey)).map(({ sessionId }) => sessionId);
  const summaries = byId(await store.listSessionSummaries!(projectKey)).map(({ sessionId, data }) => ({
    sessionId,
    data,
  }));
  const subkeys: Record<string, string[]> = {};
  for (const sessionId of sessionIds)
    subkeys[sessionId] = (await store.listSubkeys!({ projectKey, sessionId })).sort();
  return { sessions, summaries, subkeys };
}

describeBackends("postgres SessionStore", (backend) => {
  const store = () => createPostgresSessionStore({ db: backend.connection().db });

  // Tests of this file run one after another; each conformance test starts from empty tables.
  describeSessionStoreConformance({
    name: `postgres SessionStore (${backend.name})`,
    claudeConfigDir,
    trash: true,
    createStore: async () => {
      await backend
        .connection()
        .db.execute(
          sql`TRUNCATE session_store_entries, session_store_keys, session_store_trash, session_store_trash_keys, session_store_trash_entries`,
        );
      return store();
    },
  });

  it("type-checks as the SDK's own SessionStore type", () => {
    const asSdkType: SessionStore = store();
    expect(Object.keys(asSdkType).sort()).toEqual(
      [
        "append",
        "delete",
        "listSessionSummaries",
        "listSessions",
        "listSubkeys",
        "load",
        "listTrash",
        "restoreFromTrash",
        "purgeFromTrash",
        "purgeExpiredTrash",
      ].sort(),
    );
  });

  it("matches InMemorySessionStore on the same random operation sequences", async () => {
    for (const seed of [1, 2, 3]) {
      const random = seededRandom(seed);
      const ours = store();
      const reference = new InMemorySessionStore();
      const projectKey = `proj-${seed}-${randomUUID().slice(0, 8)}`;
      const sessionIds = [seededUuid(random), seededUuid(random), seededUuid(random)];
      const subpaths = [undefined, undefined, "subagents/agent-a1", "subagents/agent-b2/deep"];
      const seen = new Map<string, Set<string>>(); // uuids stored per key, to model idempotency
      const sent = new Map<string, SessionStoreEntry[][]>(); // batches sent per key, for retries
      const clock = { ms: Date.UTC(2026, 0, 1) };
      const idOf = (key: SessionKey) => `${key.sessionId}/${key.subpath ?? ""}`;
      for (let step = 0; step < 120; step++) {
        const key: SessionKey = {
          projectKey,
          sessionId: sessionIds[Math.floor(random() * sessionIds.length)]!,
          ...(() => {
            const subpath = subpaths[Math.floor(random() * subpaths.length)];
            return subpath === undefined ? {} : { subpath };
          })(),
        };
        const roll = random();
        if (roll < 0.6) {
          const previous = sent.get(idOf(key)) ?? [];
          // A retry resends an earlier batch: uuid entries must not be stored twice.
          const batch =
            previous.length > 0 && random() < 0.2
              ? previous[Math.floor(random() * previous.length)]!
              : storeEntries(random, Math.floor(random() * 25), clock);
          sent.set(idOf(key), [...previous, batch]);
          const uuids = seen.get(idOf(key)) ?? new Set<string>();
          seen.set(idOf(key), uuids);
          const fresh = batch.filter(
            (entry) => entry.uuid === undefined || (!uuids.has(entry.uuid) && uuids.add(entry.uuid)),
          );
          await ours.append(key, batch);
          // The published contract: an empty batch writes nothing (this SDK's InMemorySessionStore
          // still creates the key, so it is not asked to).
          if (batch.length > 0) await reference.append(key, fresh);
        } else if (roll < 0.7) {
          await ours.delete(key);
          await reference.delete(key);
          for (const id of [...seen.keys()]) {
            if (id === idOf(key) || (key.subpath === undefined && id.startsWith(`${key.sessionId}/`))) {
              seen.delete(id);
              sent.delete(id);
            }
          }
        }
        expect(await ours.load(key)).toEqual(await reference.load(key));
        if (step % 10 === 0)
          expect(await observe(ours, projectKey, sessionIds)).toEqual(
            await observe(reference, projectKey, sessionIds),
          );
      }
      for (const sessionId of sessionIds) {
        for (const subpath of subpaths) {
          const key = { projectKey, sessionId, ...(subpath ? { subpath } : {}) };
          expect(await ours.load(key)).toEqual(await reference.load(key));
        }
      }
      expect(await observe(ours, projectKey, sessionIds)).toEqual(
        await observe(reference, projectKey, sessionIds),
      );
    }
  });

  it("summaries share listSessions' clock: mtime is the stored write time, rising on every append", async () => {
    const ours = store();
    const key = { projectKey: `proj-${randomUUID().slice(0, 8)}`, sessionId: randomUUID() };
    const before = Date.now();
    await ours.append(key, [{ type: "user", uuid: randomUUID(), message: { content: "hi" } }]);
    const [first] = await ours.listSessions(key.projectKey);
    const [summary] = await ours.listSessionSummaries(key.projectKey);
    expect(summary!.mtime).toBe(first!.mtime);
    expect(Number.isInteger(first!.mtime)).toBe(true);
    expect(Math.abs(first!.mtime - before)).toBeLessThan(60_000);
    // An empty batch changes nothing; a batch of uuids already stored still touches the session.
    await ours.append(key, []);
    expect((await ours.listSessions(key.projectKey))[0]!.mtime).toBe(first!.mtime);
    const stored = (await ours.load(key))!;
    for (let i = 0; i < 5; i++) await ours.append(key, stored);
    const [later] = await ours.listSessions(key.projectKey);
    expect(later!.mtime).toBeGreaterThanOrEqual(first!.mtime + 5);
  });

  it("keeps the summary consistent under concurrent appends to one session", async () => {
    const ours = store();
    const key = { projectKey: "proj-concurrent", sessionId: randomUUID() };
    const random = seededRandom(77);
    const clock = { ms: Date.UTC(2026, 0, 1) };
    const batches = Array.from({ length: 24 }, (_, batch) =>
      storeEntries(random, 20, clock).map((entry, position) => ({ ...entry, batch, position })),
    );
    await Promise.all(batches.map((batch) => ours.append(key, batch)));
    const loaded = (await ours.load(key)) as (SessionStoreEntry & { batch: number; position: number })[];
    expect(loaded).toHaveLength(batches.flat().length);
    // Each batch is stored whole, contiguous and in order: appends to one key are serialized.
    for (let start = 0; start < loaded.length; start += 20) {
      const batch = loaded[start]!.batch;
      expect(loaded.slice(start, start + 20)).toEqual(batches[batch]);
    }
    const [summary] = await ours.listSessionSummaries(key.projectKey);
    expect(summary!.data).toEqual(foldSessionSummary(undefined, key, loaded).data);
  });

  it(`accepts a batch of exactly ${MAX_APPEND_ENTRIES} entries (within PostgreSQL's parameter limit)`, async () => {
    const ours = store();
    const key = { projectKey: "proj-max", sessionId: randomUUID() };
    const batch = Array.from({ length: MAX_APPEND_ENTRIES }, (_, n) => ({ type: "user", uuid: `u${n}`, n }));
    await ours.append(key, batch);
    expect(await ours.load(key)).toEqual(batch);
  });

  it("compresses entries with lz4 where the server has it (PostgreSQL), else keeps pglz (PGlite)", async () => {
    const [column] = rowsOf(
      await backend.connection().db.execute(sql`
        SELECT attcompression FROM pg_attribute
        WHERE attrelid = 'session_store_entries'::regclass AND attname = 'entry'`),
    );
    // 'l' is lz4; '' is the server's default_toast_compression (pglz unless configured).
    expect(column?.attcompression).toBe(backend.name === "PostgreSQL" ? "l" : "");
    const ours = store();
    const key = { projectKey: "proj-lz4", sessionId: randomUUID() };
    // Large enough to be compressed (over 2 KB), and read back exactly.
    const batch = [
      { type: "assistant", uuid: "big", text: "stored compressed, read back whole ".repeat(400) },
    ];
    await ours.append(key, batch);
    expect(await ours.load(key)).toEqual(batch);
  });

  describe("rows written by hand that are not what the store writes are INTEGRITY on every read, with the key and the row", () => {
    const db = () => backend.connection().db;
    async function session(entries: string[], summary: string | null) {
      const key = { projectKey: "proj-corrupt", sessionId: randomUUID() };
      await db().execute(sql`
        INSERT INTO session_store_keys (project_key, session_id, subpath, mtime, summary)
        VALUES (${key.projectKey}, ${key.sessionId}, '', 1, ${summary})`);
      const ids: number[] = [];
      for (const entry of entries) {
        const [row] = rowsOf(
          await db().execute(sql`
            INSERT INTO session_store_entries (project_key, session_id, subpath, uuid, entry)
            VALUES (${key.projectKey}, ${key.sessionId}, '', NULL, ${entry}) RETURNING id`),
        );
        ids.push(Number(row!.id));
      }
      return { key, ids };
    }
    const good = '{"type":"user","uuid":"a"}';
    const goodSummary = JSON.stringify({ sessionId: "x", mtime: 1, data: { customTitle: "T" } });

    it.each([
      ["not JSON", '{"type":"user",'],
      ["a number", "42"],
      ["null", "null"],
      ["an array", "[]"],
      ["an object without a type", '{"uuid":"x"}'],
      ["a uuid that no backend accepts", '{"type":"user","uuid":"a\\u0000b"}'],
    ])("an entry row that is %s: load", async (_what, text) => {
      // An append reads no entry row (the unique index keeps uuids once): only load meets it.
      const { key, ids } = await session([good, text], goodSummary);
      const err = await expectStowageError(store().load(key), "INTEGRITY", "CORRUPT_ROW");
      expect(err.details).toEqual({ key: `proj-corrupt/${key.sessionId}`, row: ids[1] });
    });

    it.each([
      ["not JSON", "{"],
      ["not an object", "5"],
      ["an object without data", '{"sessionId":"x","mtime":1}'],
    ])("a summary that is %s: listSessionSummaries and append", async (_what, text) => {
      await db().execute(sql`DELETE FROM session_store_keys WHERE project_key = 'proj-corrupt'`);
      const { key } = await session([good], text);
      for (const action of [
        () => store().listSessionSummaries(key.projectKey),
        () => store().append(key, [{ type: "user", uuid: "b" }]),
      ]) {
        const err = await expectStowageError(action(), "INTEGRITY", "CORRUPT_ROW");
        expect(err.details).toEqual({ key: `proj-corrupt/${key.sessionId}`, column: "summary" });
      }
      // Nothing was appended on top of it.
      expect(await store().load(key)).toEqual([JSON.parse(good)]);
    });
  });

  if (backend.name === "PostgreSQL") {
    it("four processes appending to one session: every entry once, each writer's order kept, summary folded in commit order", async () => {
      const projectKey = "proj-processes";
      const sessionId = randomUUID();
      const results = await Promise.all(
        [1, 2, 3, 4].map((worker) =>
          runChild(new URL("../children/append-batches.ts", import.meta.url), [
            backend.url!,
            backend.schema!,
            projectKey,
            sessionId,
            String(worker),
            "15",
            "40",
          ]),
        ),
      );
      for (const result of results) expect(result, result.stderr).toMatchObject({ code: 0 });
      const ours = store();
      const key = { projectKey, sessionId };
      const loaded = (await ours.load(key)) as (SessionStoreEntry & { worker: number; n: number })[];
      expect(loaded).toHaveLength(4 * 15 * 40);
      expect(new Set(loaded.map((entry) => entry.uuid)).size).toBe(loaded.length);
      for (const worker of [1, 2, 3, 4]) {
        const ns = loaded.filter((entry) => entry.worker === worker).map((entry) => entry.n);
        expect(ns).toEqual([...ns].sort((a, b) => a - b));
      }
      const [summary] = await ours.listSessionSummaries(projectKey);
      expect(summary!.data).toEqual(foldSessionSummary(undefined, key, loaded).data);
      expect(summary!.mtime).toBe((await ours.listSessions(projectKey))[0]!.mtime);
    });
  }
});

describe("createPostgresSessionStore", () => {
  it("exposes every optional SessionStore method", () => {
    const db = { select() {}, execute() {}, transaction() {} };
    const methods = Object.keys(createPostgresSessionStore({ db: db as never }));
    expect(methods).toEqual(
      expect.arrayContaining(["listSessions", "listSessionSummaries", "delete", "listSubkeys"]),
    );
  });

  it("takes one options object and refuses anything without a db", async () => {
    await expectStowageError(() => createPostgresSessionStore(undefined as never), "INVALID_INPUT");
    await expectStowageError(() => createPostgresSessionStore({} as never), "INVALID_INPUT");
  });
});
