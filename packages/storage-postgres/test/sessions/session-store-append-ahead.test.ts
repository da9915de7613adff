import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";
import { expectStowageError, seededRandom } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { sql } from "drizzle-orm";
import { expect, it } from "vitest";
import { rowsOf, type StowageDatabase } from "../../src/database.js";
import { parsedOnArrivalOf } from "../../src/rows-parsed-on-arrival.js";
import { createPostgresSessionStore } from "../../src/sessions/session-store.js";
import { describeBackends } from "../backends.js";
import { storeEntries } from "../store-entries.js";

// The SDK reads CLAUDE_CONFIG_DIR once per process; vitest runs this file in its own fork.
process.env.CLAUDE_CONFIG_DIR = join(await tempDirectory("stowage-pg-append-ahead-"), ".claude");
const { foldSessionSummary } = await import("@anthropic-ai/claude-agent-sdk");

/** A database that counts the statements and transactions run through it (not inside a transaction). */
function counting(db: StowageDatabase) {
  const counts = { statements: 0, transactions: 0 };
  const counted = new Proxy(db, {
    get(target, property, receiver) {
      if (property === "execute")
        return (...args: unknown[]) => {
          counts.statements++;
          return (target.execute as (...a: unknown[]) => unknown)(...args);
        };
      if (property === "transaction")
        return (...args: unknown[]) => {
          counts.transactions++;
          return (target.transaction as (...a: unknown[]) => unknown)(...args);
        };
      return Reflect.get(target, property, receiver);
    },
  });
  return { db: counted, counts };
}

describeBackends("postgres SessionStore appends to a key row it wrote last", (backend) => {
  it("appends to a main transcript it wrote last in one statement, without a transaction", async () => {
    const { db, counts } = counting(backend.connection().db);
    const ours = createPostgresSessionStore({ db });
    const key = { projectKey: "proj-ahead", sessionId: randomUUID() };
    const random = seededRandom(5);
    const clock = { ms: Date.UTC(2026, 0, 1) };
    await ours.append(key, storeEntries(random, 10, clock));
    expect(counts.transactions).toBe(1);
    const before = { ...counts };
    await ours.append(key, storeEntries(random, 10, clock));
    expect(counts).toEqual({ statements: before.statements + 1, transactions: before.transactions });
    // A subagent transcript keeps no summary: every append is one statement.
    const subkey = { ...key, subpath: "subagents/agent-a1" };
    await ours.append(subkey, storeEntries(random, 3, clock));
    expect(counts).toEqual({ statements: before.statements + 2, transactions: before.transactions });
  });

  it("two stores taking turns on one session, with retried batches: every entry once, the summary of what is stored", async () => {
    for (const seed of [1, 2, 3]) {
      const random = seededRandom(seed);
      // Two stores of one database, as two processes: each one's remembered key row goes stale.
      const stores = [
        createPostgresSessionStore({ db: backend.connection().db }),
        createPostgresSessionStore({ db: backend.connection().db }),
      ];
      const key = { projectKey: `proj-turns-${seed}`, sessionId: randomUUID() };
      const clock = { ms: Date.UTC(2026, 0, 1) };
      const sent: SessionStoreEntry[][] = [];
      const expected: SessionStoreEntry[] = [];
      const stored = new Set<string>();
      for (let step = 0; step < 40; step++) {
        const store = stores[Math.floor(random() * stores.length)]!;
        if (random() < 0.1) {
          await store.delete(key);
          expected.length = 0;
          stored.clear();
          sent.length = 0;
          continue;
        }
        const retry = sent.length > 0 && random() < 0.3;
        const batch = retry
          ? sent[Math.floor(random() * sent.length)]!
          : // Sometimes a batch that repeats an entry of its own.
            ((entries) => (random() < 0.1 && entries.length > 0 ? [...entries, entries[0]!] : entries))(
              storeEntries(random, 1 + Math.floor(random() * 8), clock),
            );
        sent.push(batch);
        for (const entry of batch) {
          if (entry.uuid !== undefined && stored.has(entry.uuid)) continue;
          if (entry.uuid !== undefined) stored.add(entry.uuid);
          expected.push(entry);
        }
        await store.append(key, batch);
        expect(await stores[0]!.load(key)).toEqual(expected.length === 0 ? null : expected);
      }
      const summaries = await stores[1]!.listSessionSummaries(key.projectKey);
      if (expected.length === 0) expect(summaries).toEqual([]);
      else {
        expect(summaries.map((summary) => summary.data)).toEqual([
          foldSessionSummary(undefined, key, expected).data,
        ]);
        expect(summaries[0]!.mtime).toBe((await stores[0]!.listSessions(key.projectKey))[0]!.mtime);
      }
    }
  });
});

// node-postgres reads a clear transcript in one statement, each row parsed as it arrives; PGlite
// (and sealed rows) in pages of 1,000. Both must give the same entries and the same errors.
describeBackends("postgres SessionStore loads long transcripts", (backend) => {
  it(`reads rows as they arrive on node-postgres, in pages on PGlite (${backend.name})`, () => {
    const parsedOnArrival = parsedOnArrivalOf(backend.connection().db);
    expect(parsedOnArrival !== undefined).toBe(backend.name === "PostgreSQL");
  });

  for (const count of [999, 1_000, 1_001, 2_000, 2_500]) {
    it(`loads ${count} entries whole and in order`, async () => {
      const ours = createPostgresSessionStore({ db: backend.connection().db });
      const key = { projectKey: "proj-pages", sessionId: randomUUID() };
      const batch = Array.from({ length: count }, (_, n) => ({ type: "user", uuid: `u${n}`, n }));
      await ours.append(key, batch);
      expect(await ours.load(key)).toEqual(batch);
    });
  }

  it.each([
    ["not JSON", '{"type":"user",', "INTEGRITY", "CORRUPT_ROW"],
    ["an object without a type", '{"uuid":"x"}', "INTEGRITY", "CORRUPT_ROW"],
    ["sealed (this store has no seal)", "AAAAsealed-looking", "FORBIDDEN", "ROW_SEALED"],
  ] as const)(
    "a row past the first 1,000 that is %s fails the load naming that row",
    async (_what, text, code, reason) => {
      const db = backend.connection().db;
      const ours = createPostgresSessionStore({ db });
      const key = { projectKey: "proj-pages-bad", sessionId: randomUUID() };
      await ours.append(
        key,
        Array.from({ length: 1_500 }, (_, n) => ({ type: "user", uuid: `u${n}` })),
      );
      const [row] = rowsOf(
        await db.execute(sql`
        INSERT INTO session_store_entries (project_key, session_id, subpath, uuid, entry)
        VALUES (${key.projectKey}, ${key.sessionId}, '', NULL, ${text}) RETURNING id`),
      );
      await ours.append(key, [{ type: "user", uuid: "after" }]);
      const err = await expectStowageError(ours.load(key), code, reason);
      expect(err.details).toEqual({ key: `proj-pages-bad/${key.sessionId}`, row: Number(row!.id) });
    },
  );
});
