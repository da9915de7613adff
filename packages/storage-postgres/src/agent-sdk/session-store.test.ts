import { randomUUID } from "node:crypto";
import {
  foldSessionSummary,
  InMemorySessionStore,
  type SessionKey,
  type SessionStore,
  type SessionStoreEntry,
} from "@anthropic-ai/claude-agent-sdk";
import { StowageError } from "@stowage/core";
import { HOSTILE_KEYS } from "@stowage/core/testing";
import { HOSTILE_IDS, seededRandom, seededUuid } from "@stowage/sessions/testing";
import { runChild } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { describeBackends } from "../../test/backends.js";
import { storeEntries } from "../../test/store-entries.js";
import { MAX_APPEND_ENTRIES } from "./session-key.js";
import { createPostgresSessionStore, type PostgresSessionStore } from "./session-store.js";

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "success",
    (err: unknown) => (StowageError.is(err) ? err.code : String(err)),
  );

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
  const store = () => createPostgresSessionStore(backend.connection().db);

  it("type-checks as the SDK's own SessionStore type", () => {
    const asSdkType: SessionStore = store();
    expect(Object.keys(asSdkType).sort()).toEqual(
      ["append", "delete", "listSessionSummaries", "listSessions", "listSubkeys", "load"].sort(),
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
          await reference.append(key, fresh);
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
  }, 120_000);

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
    for (let i = 0; i < 5; i++) await ours.append(key, []);
    const [later] = await ours.listSessions(key.projectKey);
    expect(later!.mtime).toBeGreaterThanOrEqual(first!.mtime + 5);
  });

  it("append is idempotent on uuid, keeps order across batches, and stores uuid-less entries each time", async () => {
    const ours = store();
    const key = { projectKey: "proj-idem", sessionId: randomUUID() };
    const a = { type: "user", uuid: "u-a", n: 1 };
    const b = { type: "assistant", uuid: "u-b", n: 2 };
    const title = { type: "custom-title", customTitle: "T" };
    await ours.append(key, [a, b, a]);
    await ours.append(key, [b, title]);
    await ours.append(key, [a, title, { type: "user", uuid: "u-c", n: 3 }]);
    expect(await ours.load(key)).toEqual([a, b, title, title, { type: "user", uuid: "u-c", n: 3 }]);
  });

  it("load is null for a key never written and [] after an empty append; entries come back deep-equal", async () => {
    const ours = store();
    const key = { projectKey: "proj-load", sessionId: randomUUID() };
    expect(await ours.load(key)).toBeNull();
    await ours.append(key, []);
    expect(await ours.load(key)).toEqual([]);
    const odd = {
      type: "user",
      uuid: "odd",
      text: 'NUL \u0000, emoji 😀, lone \ud800 surrogate, quote " backslash \\',
      nested: { deep: [[1, 2.5, -0.125, 1e300], { x: null, t: true }] },
      empty: {},
    };
    await ours.append(key, [odd]);
    expect(await ours.load(key)).toEqual([odd]);
  });

  it("delete of a main transcript cascades to its subkeys; deleting a subkey leaves the rest", async () => {
    const ours = store();
    const projectKey = "proj-delete";
    const sessionId = randomUUID();
    const main = { projectKey, sessionId };
    const sub1 = { ...main, subpath: "subagents/agent-1" };
    const sub2 = { ...main, subpath: "subagents/agent-2" };
    for (const key of [main, sub1, sub2]) await ours.append(key, [{ type: "user", uuid: "x" }]);
    expect(await ours.listSubkeys(main)).toEqual(["subagents/agent-1", "subagents/agent-2"]);
    await ours.delete(sub1);
    expect(await ours.load(sub1)).toBeNull();
    expect(await ours.listSubkeys(main)).toEqual(["subagents/agent-2"]);
    expect(await ours.load(main)).toHaveLength(1);
    await ours.delete(main);
    for (const key of [main, sub2]) expect(await ours.load(key)).toBeNull();
    expect(await ours.listSubkeys(main)).toEqual([]);
    expect((await ours.listSessions(projectKey)).map((s) => s.sessionId)).not.toContain(sessionId);
    expect((await ours.listSessionSummaries(projectKey)).map((s) => s.sessionId)).not.toContain(sessionId);
    // The uuid can be written again after a delete.
    await ours.append(main, [{ type: "user", uuid: "x" }]);
    expect(await ours.load(main)).toHaveLength(1);
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

  it("rejects hostile keys and malformed entries with INVALID_INPUT, writing nothing", async () => {
    const ours: PostgresSessionStore = store();
    const sessionId = randomUUID();
    const good = { projectKey: "proj-hostile", sessionId };
    // A leading dash is how the SDK's own project keys start ("-workspace-app"): not hostile there.
    for (const { value } of HOSTILE_IDS.filter(({ why }) => why !== "leading dash")) {
      for (const key of [
        { projectKey: value, sessionId },
        { projectKey: "proj-hostile", sessionId: value },
      ]) {
        expect(await codeOf(ours.append(key as SessionKey, [{ type: "user" }]))).toBe("INVALID_INPUT");
        expect(await codeOf(ours.load(key as SessionKey))).toBe("INVALID_INPUT");
        expect(await codeOf(ours.delete(key as SessionKey))).toBe("INVALID_INPUT");
        expect(await codeOf(ours.listSubkeys(key as SessionKey))).toBe("INVALID_INPUT");
      }
      expect(await codeOf(ours.listSessions(value as string))).toBe("INVALID_INPUT");
      expect(await codeOf(ours.listSessionSummaries(value as string))).toBe("INVALID_INPUT");
    }
    for (const { value } of [...HOSTILE_KEYS.filter(({ value }) => value !== undefined), { value: "" }]) {
      expect(await codeOf(ours.append({ ...good, subpath: value as string }, [{ type: "user" }]))).toBe(
        "INVALID_INPUT",
      );
    }
    const cyclic: Record<string, unknown> = { type: "user" };
    cyclic.self = cyclic;
    const badBatches: unknown[] = [
      "not an array",
      [null],
      [{ uuid: "no type" }],
      [{ type: 5 }],
      [["type", "user"]],
      [{ type: "user", uuid: 42 }],
      [{ type: "user", uuid: "" }],
      [{ type: "user", big: 10n }],
      [cyclic],
      Array.from({ length: MAX_APPEND_ENTRIES + 1 }, () => ({ type: "user" })),
    ];
    for (const batch of badBatches) {
      expect(await codeOf(ours.append(good, batch as SessionStoreEntry[]))).toBe("INVALID_INPUT");
    }
    expect(await ours.load(good)).toBeNull();
  });

  it(`accepts a batch of exactly ${MAX_APPEND_ENTRIES} entries (within PostgreSQL's parameter limit)`, async () => {
    const ours = store();
    const key = { projectKey: "proj-max", sessionId: randomUUID() };
    const batch = Array.from({ length: MAX_APPEND_ENTRIES }, (_, n) => ({ type: "user", uuid: `u${n}`, n }));
    await ours.append(key, batch);
    expect(await ours.load(key)).toEqual(batch);
  });

  it("an aborted signal fails with ABORTED and writes nothing", async () => {
    const ours = store();
    const key = { projectKey: "proj-abort", sessionId: randomUUID() };
    const controller = new AbortController();
    controller.abort();
    expect(await codeOf(ours.append(key, [{ type: "user" }], { signal: controller.signal }))).toBe("ABORTED");
    expect(await ours.load(key)).toBeNull();
  });

  if (backend.name === "PostgreSQL") {
    it("four processes appending to one session: every entry once, each writer's order kept, summary folded in commit order", async () => {
      const projectKey = "proj-processes";
      const sessionId = randomUUID();
      const results = await Promise.all(
        [1, 2, 3, 4].map((worker) =>
          runChild(new URL("../../test/children/append-batches.ts", import.meta.url), [
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
    }, 120_000);
  }
});

describe("createPostgresSessionStore", () => {
  it("exposes every optional SessionStore method", () => {
    const methods = Object.keys(createPostgresSessionStore({} as never));
    expect(methods).toEqual(
      expect.arrayContaining(["listSessions", "listSessionSummaries", "delete", "listSubkeys"]),
    );
  });
});
