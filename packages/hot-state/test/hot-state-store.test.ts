import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createMemoryObjectStore } from "@stowage/core";
import { expectStowageError, HOSTILE_KEYS, HOSTILE_PREFIXES } from "@stowage/core/testing";
import { createFsObjectStore } from "@stowage/storage-fs";
import {
  countTokensHeuristic,
  filesUnder,
  runChild,
  tempDirectory,
  withoutJournal,
} from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { hotStateStoreOptionsFromEnv } from "../src/env.js";
import { createHotStateStore, type HotStateStoreOptions } from "../src/index.js";
import { captureLogger } from "./capture-logger.js";

const base = await tempDirectory("stowage-hot-state-store-");
const writeHotState = new URL("./children/write-hot-state.ts", import.meta.url);
const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");
const FIXED = new Date("2026-11-23T04:00:00.000Z");

const open = (options: Partial<HotStateStoreOptions> = {}) =>
  createHotStateStore({
    store: createMemoryObjectStore(),
    countTokens: countTokensHeuristic,
    logger: captureLogger(),
    now: () => FIXED,
    ...options,
  });

describe("hot-state store", () => {
  it("writes version 1, 2, … each carrying the previous version's hash; readers get latest or any version", async () => {
    const { dispatcherFor, reader } = open();
    const dispatcher = dispatcherFor("sess-1");
    expect(await reader.latest("sess-1")).toBeNull();
    const first = await dispatcher.write({ session_id: "sess-1", objective: "Migrate storage" });
    expect(first).toMatchObject({
      sessionId: "sess-1",
      version: 1,
      previousHash: null,
      writtenAt: FIXED.toISOString(),
    });
    expect(first.json).toBe('{"session_id":"sess-1","objective":"Migrate storage"}');
    const second = await dispatcher.update((state) => ({
      ...state,
      accepted_decisions: ["shard by two hex"],
    }));
    expect(second.version).toBe(2);
    expect(second.previousHash).toBe(first.hash);
    expect(second.state.accepted_decisions).toEqual(["shard by two hex"]);
    expect((await reader.latest("sess-1"))?.hash).toBe(second.hash);
    expect((await reader.get("sess-1", 1))?.json).toBe(first.json);
    expect(await reader.get("sess-1", 3)).toBeNull();
    expect(await reader.latest("other")).toBeNull();
    expect(Object.isFrozen(second.state)).toBe(true);
    expect("write" in reader).toBe(false);
  });

  it("stores one JSON object per version under <prefix><session>/<12 digits>.json; the hash is the SHA-256 of its bytes", async () => {
    const root = join(base, "layout");
    const { dispatcherFor } = open({ store: createFsObjectStore({ root }), prefix: "hs/" });
    const dispatcher = dispatcherFor("sess-a");
    const v1 = await dispatcher.write({ session_id: "sess-a" });
    await dispatcher.write({ session_id: "sess-a", risk_level: "high" });
    expect(withoutJournal(await filesUnder(root))).toEqual([
      "hs/sess-a/000000000001.json",
      "hs/sess-a/000000000002.json",
    ]);
    const bytes = await readFile(join(root, "hs/sess-a/000000000001.json"));
    expect(sha256(bytes)).toBe(v1.hash);
    const stored = JSON.parse(bytes.toString("utf8"));
    expect(stored).toMatchObject({
      type: "hot_state_version",
      session_id: "sess-a",
      version: 1,
      previous_hash: null,
    });
    const second = JSON.parse(await readFile(join(root, "hs/sess-a/000000000002.json"), "utf8"));
    expect(second.previous_hash).toBe(v1.hash);
    expect(second.state).toEqual({ session_id: "sess-a", risk_level: "high" });
  });

  it("fits every write to the budget and keeps what was shed", async () => {
    const { dispatcherFor } = open({ budget: { maxArtifactIndexEntries: 1 } });
    const id = (c: string) => c.repeat(64);
    const written = await dispatcherFor("s").write({
      session_id: "s",
      artifact_index: [
        { artifact_id: id("a"), type: "doc" },
        { artifact_id: id("b"), type: "code" },
      ],
    });
    expect(written.state.artifact_index).toEqual([{ artifact_id: id("b"), type: "code" }]);
    expect(written.truncated).toBe(true);
    expect(written.shed).toMatchObject([
      { field: "artifact_index", reason: "max_entries", artifact_id: id("a") },
    ]);
  });

  it("gives the second writer of a version CONFLICT and overwrites nothing", async () => {
    const { dispatcherFor, reader } = open();
    const one = dispatcherFor("s");
    const two = dispatcherFor("s");
    await one.write({ session_id: "s", objective: "one" });
    await two.load();
    await one.update((state) => ({ ...state, objective: "one again" }));
    const conflict = await expectStowageError(
      two.update((state) => ({ ...state, objective: "two" })),
      "CONFLICT",
    );
    expect(conflict.details).toMatchObject({ sessionId: "s", version: 2, latest: 2 });
    expect((await reader.latest("s"))?.state.objective).toBe("one again");
    await two.load();
    expect((await two.update((state) => ({ ...state, objective: "two" }))).version).toBe(3);
  });

  it("settles concurrent writers in one process: exactly one wins each version", async () => {
    const { dispatcherFor, reader } = open();
    const writers = Array.from({ length: 8 }, () => dispatcherFor("s"));
    const results = await Promise.allSettled(
      writers.map((writer, i) => writer.write({ session_id: "s", objective: `writer ${i}` })),
    );
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
    for (const result of results) {
      if (result.status === "rejected") await expectStowageError(Promise.reject(result.reason), "CONFLICT");
    }
    expect((await reader.latest("s"))?.version).toBe(1);
  });

  it("writes after a given version (a stateless writer) and refuses one that does not exist", async () => {
    const { dispatcherFor, reader } = open();
    await dispatcherFor("s").write({ session_id: "s" });
    const stateless = dispatcherFor("s");
    expect((await stateless.write({ session_id: "s", objective: "x" }, { expectedVersion: 1 })).version).toBe(
      2,
    );
    await expectStowageError(
      dispatcherFor("s").write({ session_id: "s" }, { expectedVersion: 5 }),
      "CONFLICT",
    );
    await expectStowageError(
      dispatcherFor("s").write({ session_id: "s" }, { expectedVersion: 0 }),
      "CONFLICT",
    );
    expect((await reader.latest("s"))?.version).toBe(2);
  });

  it("finds the latest of a long history from a fresh reader in a few requests", async () => {
    const store = createMemoryObjectStore();
    const { dispatcherFor } = open({ store });
    const dispatcher = dispatcherFor("long");
    for (let i = 0; i < 300; i++)
      await dispatcher.write({ session_id: "long", last_successful_step: `step ${i}` });
    let heads = 0;
    const counting = {
      ...store,
      head: (...args: Parameters<typeof store.head>) => {
        heads++;
        return store.head(...args);
      },
    };
    const { reader } = open({ store: counting });
    expect((await reader.latest("long"))?.state.last_successful_step).toBe("step 299");
    expect(heads).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(300)) + 2);
  });

  it("reads a damaged version as INTEGRITY, never as a state", async () => {
    const root = join(base, "damaged");
    const { dispatcherFor, reader } = open({ store: createFsObjectStore({ root }) });
    await dispatcherFor("s").write({ session_id: "s" });
    const path = join(root, "hot-state/s/000000000001.json");
    const original = await readFile(path, "utf8");
    for (const damaged of [
      "not json",
      "\u00ff\u00fe",
      JSON.stringify({ ...JSON.parse(original), version: 2 }),
      JSON.stringify({ ...JSON.parse(original), session_id: "t" }),
      JSON.stringify({ ...JSON.parse(original), state: { session_id: "s", extra: 1 } }),
      JSON.stringify({ ...JSON.parse(original), previous_hash: "a".repeat(64) }),
    ]) {
      await writeFile(path, damaged);
      await expectStowageError(reader.get("s", 1), "INTEGRITY");
    }
  });

  it("refuses a state of another session", async () => {
    const { dispatcherFor } = open();
    await expectStowageError(dispatcherFor("s").write({ session_id: "t" }), "INVALID_INPUT");
  });
});

describe("hot-state store: stores, deletions and pruning", () => {
  it("refuses a store whose create-only puts are not atomic (two writers could both win a version)", async () => {
    const store = createMemoryObjectStore();
    const notAtomic = {
      ...store,
      name: "s3",
      capabilities: { ...store.capabilities, atomicCreateOnly: false },
    };
    const err = await expectStowageError(() => open({ store: notAtomic }), "INVALID_INPUT");
    expect(err.reason).toBe("NOT_ATOMIC_STORE");
  });

  it("finds the latest again after the session's versions were deleted and written anew (a stale hint is not trusted)", async () => {
    const store = createMemoryObjectStore();
    const { dispatcherFor, reader } = open({ store });
    const first = dispatcherFor("s");
    for (let i = 1; i <= 5; i++) await first.write({ session_id: "s", last_successful_step: `old ${i}` });
    expect((await reader.latest("s"))?.version).toBe(5);
    for (let i = 1; i <= 5; i++) await store.delete(`hot-state/s/${String(i).padStart(12, "0")}.json`);
    expect(await reader.latest("s")).toBeNull();
    const again = dispatcherFor("s");
    await again.write({ session_id: "s", last_successful_step: "new 1" });
    await again.write({ session_id: "s", last_successful_step: "new 2" });
    expect(await reader.latest("s")).toMatchObject({ version: 2, state: { last_successful_step: "new 2" } });
    // The first dispatcher still holds version 5: writing after it is CONFLICT, not version 6
    // past a gap that every reader would stop before.
    await expectStowageError(first.write({ session_id: "s" }), "CONFLICT");
    expect(await store.head("hot-state/s/000000000006.json")).toBeNull();
  });

  it("refuses to write after a version that was written again since the dispatcher read it", async () => {
    const store = createMemoryObjectStore();
    const { dispatcherFor } = open({ store });
    const stale = dispatcherFor("s");
    await stale.write({ session_id: "s", objective: "first history" });
    await store.delete("hot-state/s/000000000001.json");
    await dispatcherFor("s").write({ session_id: "s", objective: "second history" });
    const conflict = await expectStowageError(stale.write({ session_id: "s" }), "CONFLICT");
    expect(conflict.details).toMatchObject({ version: 2, latest: 1 });
  });

  it("keeps the newest keepVersions versions, oldest deleted first; latest and get still work, also from a fresh reader", async () => {
    const store = createMemoryObjectStore();
    const { dispatcherFor, reader } = open({ store, keepVersions: 3 });
    const dispatcher = dispatcherFor("s");
    for (let i = 1; i <= 7; i++)
      await dispatcher.write({ session_id: "s", last_successful_step: `step ${i}` });
    const keys = (await store.list({ prefix: "hot-state/s/" })).items.map((item) => item.key);
    expect(keys).toEqual([
      "hot-state/s/000000000005.json",
      "hot-state/s/000000000006.json",
      "hot-state/s/000000000007.json",
    ]);
    expect((await reader.latest("s"))?.version).toBe(7);
    expect(await reader.get("s", 4)).toBeNull();
    expect((await reader.get("s", 5))?.state.last_successful_step).toBe("step 5");
    const fresh = open({ store, keepVersions: 3 });
    expect((await fresh.reader.latest("s"))?.version).toBe(7);
    await fresh.dispatcherFor("s").load();
    // A dispatcher of a store without the option prunes nothing.
    const keepAll = open({ store });
    const writer = keepAll.dispatcherFor("s");
    await writer.load();
    await writer.write({ session_id: "s" });
    expect((await store.list({ prefix: "hot-state/s/" })).items).toHaveLength(4);
  });

  it("reads keepVersions from STOWAGE_HOT_STATE_KEEP_VERSIONS, refusing what is not a positive whole number", async () => {
    expect(hotStateStoreOptionsFromEnv({})).toEqual({});
    expect(hotStateStoreOptionsFromEnv({ STOWAGE_HOT_STATE_KEEP_VERSIONS: "50" })).toEqual({
      keepVersions: 50,
    });
    for (const value of ["0", "-1", "1.5", "ten", "1e3"]) {
      await expectStowageError(
        () => hotStateStoreOptionsFromEnv({ STOWAGE_HOT_STATE_KEEP_VERSIONS: value }),
        "INVALID_INPUT",
        "INVALID_SETTING",
      );
    }
  });

  it.each([0, -1, 1.5, "3", Number.NaN])("refuses keepVersions %j", async (keepVersions) => {
    await expectStowageError(() => open({ keepVersions: keepVersions as number }), "INVALID_INPUT");
  });
});

describe("hot-state store: the dispatcher's claim", () => {
  it("once claimed, only writes with the claim's token succeed, in any process; a second claim is CONFLICT", async () => {
    const store = createMemoryObjectStore();
    const { dispatcherFor, claimDispatcher, reader } = open({ store });
    await dispatcherFor("s").write({ session_id: "s", objective: "before the claim" });
    const { token } = await claimDispatcher("s");
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const stored = new TextDecoder().decode((await store.get("hot-state/s/dispatcher.json"))!);
    expect(stored).not.toContain(token);
    expect(JSON.parse(stored).token_sha256).toBe(sha256(token));

    for (const other of [undefined, "x".repeat(43), `${token}x`]) {
      const err = await expectStowageError(
        dispatcherFor("s", other === undefined ? {} : { token: other }).write(
          { session_id: "s" },
          { expectedVersion: 1 },
        ),
        "FORBIDDEN",
      );
      expect(err.reason).toBe("NOT_DISPATCHER");
    }
    // Another store over the same objects (another process) honours the claim too.
    const elsewhere = open({ store });
    await expectStowageError(
      elsewhere.dispatcherFor("s").write({ session_id: "s" }, { expectedVersion: 1 }),
      "FORBIDDEN",
    );
    const written = await elsewhere
      .dispatcherFor("s", { token })
      .write({ session_id: "s" }, { expectedVersion: 1 });
    expect(written.version).toBe(2);
    expect((await reader.latest("s"))?.version).toBe(2);

    const again = await expectStowageError(claimDispatcher("s"), "CONFLICT");
    expect(again.reason).toBe("DISPATCHER_CLAIMED");
    // A token for a session nobody claimed is refused: it cannot be the dispatcher's.
    await expectStowageError(dispatcherFor("t", { token }).write({ session_id: "t" }), "FORBIDDEN");
  });

  it("a second claim with the holder's token confirms the claim (same token); any other is CONFLICT", async () => {
    const { claimDispatcher, dispatcherFor } = open();
    const { token } = await claimDispatcher("s");
    expect(await claimDispatcher("s", { token })).toEqual({ sessionId: "s", token });
    for (const other of [{}, { token: "x".repeat(43) }]) {
      const err = await expectStowageError(claimDispatcher("s", other), "CONFLICT");
      expect(err.reason).toBe("DISPATCHER_CLAIMED");
    }
    expect((await dispatcherFor("s", { token }).write({ session_id: "s" })).version).toBe(1);
    // A token is accepted only where it holds a claim: not for a session nobody claimed.
    const unclaimed = await expectStowageError(claimDispatcher("t", { token }), "FORBIDDEN");
    expect(unclaimed.reason).toBe("NOT_DISPATCHER");
  });

  it("releasing the claim needs its token; released, the session is unclaimed and its versions stay", async () => {
    const store = createMemoryObjectStore();
    const { claimDispatcher, releaseDispatcher, dispatcherFor, reader } = open({ store });
    const { token } = await claimDispatcher("s");
    await dispatcherFor("s", { token }).write({ session_id: "s", objective: "kept" });
    for (const other of [{}, { token: "x".repeat(43) }]) {
      const err = await expectStowageError(releaseDispatcher("s", other as { token: string }), "FORBIDDEN");
      expect(err.reason).toBe("NOT_DISPATCHER");
    }
    await expectStowageError(
      dispatcherFor("s").write({ session_id: "s" }, { expectedVersion: 1 }),
      "FORBIDDEN",
    );
    await releaseDispatcher("s", { token });
    expect(await store.get("hot-state/s/dispatcher.json")).toBeNull();
    expect((await reader.latest("s"))?.state.objective).toBe("kept");
    // The old token no longer holds anything; a new dispatcher may claim.
    await expectStowageError(
      dispatcherFor("s", { token }).write({ session_id: "s" }, { expectedVersion: 1 }),
      "FORBIDDEN",
    );
    const next = await claimDispatcher("s");
    expect(next.token).not.toBe(token);
  });

  it("reads a damaged claim as INTEGRITY and writes nothing", async () => {
    const store = createMemoryObjectStore();
    const { dispatcherFor, reader } = open({ store });
    await store.put("hot-state/s/dispatcher.json", new TextEncoder().encode("{not json"));
    await expectStowageError(dispatcherFor("s", { token: "abc" }).write({ session_id: "s" }), "INTEGRITY");
    expect(await reader.latest("s")).toBeNull();
  });

  it.each([42, "", null, { token: "x" }])("refuses the token %j", async (token) => {
    const { dispatcherFor } = open();
    await expectStowageError(() => dispatcherFor("s", { token: token as string }), "INVALID_INPUT");
  });
});

describe("hot-state store: a claim made while a write without a token is under way", () => {
  it("stops that write: the claim is read again after the state is fitted, right before the put", async () => {
    // Fitting a state may take a second; before, a write that found no claim went on to store its
    // version after a claim made meanwhile (issue 36, item 3: seen on PostgreSQL with two processes).
    const store = createMemoryObjectStore();
    const { claimDispatcher, dispatcherFor, reader } = open({ store });
    let claimed: Promise<{ token: string }> | undefined;
    const claimingStore = {
      ...store,
      // The write has checked the claim (none) and looks for its version: the claim lands now.
      async head(key: string, op?: Parameters<typeof store.head>[1]) {
        if (key.endsWith("/000000000001.json") && claimed === undefined) {
          claimed = claimDispatcher("s");
          await claimed;
        }
        return store.head(key, op);
      },
    };
    const racing = open({ store: claimingStore });
    const err = await expectStowageError(
      racing.dispatcherFor("s").write({ session_id: "s", objective: "written without the token" }),
      "FORBIDDEN",
    );
    expect(err.reason).toBe("NOT_DISPATCHER");
    expect(claimed).toBeDefined();
    expect(await reader.latest("s")).toBeNull();
    const { token } = await claimed!;
    const written = await dispatcherFor("s", { token }).write({
      session_id: "s",
      objective: "the dispatcher's",
    });
    expect(written.version).toBe(1);
  });
});

describe("hot-state store: hostile inputs", () => {
  const { dispatcherFor, reader } = open();
  const hostileSessionIds = [
    ...HOSTILE_KEYS,
    { value: "a/b", why: "a key, not an id" },
    { value: ".hidden", why: "hidden name" },
    { value: "%2e%2e", why: "percent-encoded traversal" },
    { value: "x".repeat(129), why: "over 128 characters" },
  ];
  it.each(hostileSessionIds)("refuses session id $why", async ({ value }) => {
    await expectStowageError(() => dispatcherFor(value as string), "INVALID_INPUT");
    await expectStowageError(() => reader.latest(value as string), "INVALID_INPUT");
    await expectStowageError(() => reader.get(value as string, 1), "INVALID_INPUT");
  });

  const hostileVersions: { value: unknown; why: string }[] = [
    { value: 0, why: "zero" },
    { value: -1, why: "negative" },
    { value: 1.5, why: "fractional" },
    { value: Number.NaN, why: "NaN" },
    { value: Number.POSITIVE_INFINITY, why: "Infinity" },
    { value: 1e12, why: "past the 12-digit keys" },
    { value: "1", why: "a string" },
    { value: "../1", why: "traversal" },
    { value: null, why: "null" },
    { value: 2n, why: "a bigint" },
  ];
  it.each(hostileVersions)("refuses version $why", async ({ value }) => {
    await expectStowageError(() => reader.get("s", value as number), "INVALID_INPUT");
    if (value !== 0) {
      await expectStowageError(
        () => dispatcherFor("s").write({ session_id: "s" }, { expectedVersion: value as number }),
        "INVALID_INPUT",
      );
    }
  });

  it("refuses a bad prefix or store", async () => {
    for (const { value } of [...HOSTILE_PREFIXES, { value: "x" }, { value: "../" }, { value: 1 }]) {
      await expectStowageError(() => open({ prefix: value as string }), "INVALID_INPUT");
    }
    await expectStowageError(() => createHotStateStore({ store: null as never }), "INVALID_INPUT");
  });
});

describe("hot-state store: two processes", () => {
  it("two dispatchers in two processes race on one session: one of them conflicts, every version is written once, the chain holds", async () => {
    const root = join(base, "two-processes");
    const count = 25;
    const writers = ["a", "b"];
    // Both load the empty session before a barrier, so both first write version 1: one of the
    // two must get CONFLICT whatever the scheduling.
    const children = await Promise.all(
      writers.map((writer) =>
        runChild(writeHotState, [
          root,
          "race",
          writer,
          String(count),
          join(root, "barrier"),
          writers.join(","),
        ]),
      ),
    );
    let conflicts = 0;
    for (const child of children) {
      expect(child, child?.stderr).toMatchObject({ code: 0 });
      const [wins, lost] = child.stdout.trim().split(" ").map(Number);
      expect(wins).toBe(count);
      conflicts += lost!;
    }
    expect(conflicts).toBeGreaterThan(0);
    const { reader } = open({ store: createFsObjectStore({ root }) });
    const latest = await reader.latest("race");
    expect(latest?.version).toBe(2 * count);
    const steps = new Set<string>();
    let previousHash: string | null = null;
    for (let version = 1; version <= 2 * count; version++) {
      const stored = await reader.get("race", version);
      expect(stored?.previousHash).toBe(previousHash);
      previousHash = stored?.hash ?? null;
      steps.add(stored?.state.last_successful_step ?? "");
    }
    const expected = writers.flatMap((writer) => Array.from({ length: count }, (_, i) => `${writer}-${i}`));
    expect([...steps].sort()).toEqual(expected.sort());
  });
});
