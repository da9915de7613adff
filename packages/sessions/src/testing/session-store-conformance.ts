import { randomUUID } from "node:crypto";
import { mkdir, realpath } from "node:fs/promises";
import { join } from "node:path";
import { expectStowageError, HOSTILE_KEYS, loadVitest } from "@stowage/core/testing";
import { MAX_APPEND_ENTRIES, MAX_SUBPATH_BYTES } from "../session-store/session-store-key.js";
import { loadSummaryFold } from "../session-store/summary-fold.js";
import type { CompleteSessionStore, SessionKey, SessionStoreEntry } from "../session-store/types.js";
import { HOSTILE_IDS } from "./hostile-ids.js";
import { realisticSessionTree } from "./realistic-session.js";
import { describeImagePayloads } from "./session-store-images.js";
import { describeSessionStoreTrash, type TrashingSessionStore } from "./session-store-trash-conformance.js";
import { writeSessionTree } from "./write-session-tree.js";

const { afterEach, beforeEach, describe, expect, it } = await loadVitest("@stowage/sessions/testing");

export interface SessionStoreConformanceOptions {
  /** Suite title, e.g. `object SessionStore on fs`. */
  name: string;
  /** A fresh store that sees nothing of any other test's (its own prefix, schema or table). */
  createStore(): CompleteSessionStore | Promise<CompleteSessionStore>;
  /** Removes what a test left behind. */
  destroyStore?(store: CompleteSessionStore): Promise<void>;
  /** When set, the suite is skipped and this reason printed. */
  skip?: string;
  /**
   * The Claude config directory the SDK of this process reads (it reads `CLAUDE_CONFIG_DIR` once:
   * set it before anything imports the SDK). When given, the suite also runs the SDK's own round
   * trip: `importSessionToStore` of a local session, then `getSessionMessages` and
   * `listSessions` through the store.
   */
  claudeConfigDir?: string;
  /**
   * The store has Stowage's trash (`SessionStoreTrash`: `delete` keeps a transcript 7 days by
   * default, `listTrash`, `restoreFromTrash`, `purgeFromTrash`, `purgeExpiredTrash`): run its cases.
   */
  trash?: boolean;
}

const entry = (type: string, extra: Record<string, unknown> = {}): SessionStoreEntry => ({ type, ...extra });
const sorted = (values: string[]) => [...values].sort();
const main: SessionKey = { projectKey: "proj", sessionId: "sess" };
const sub = (subpath: string): SessionKey => ({ ...main, subpath });

/**
 * The store of the test running: a fresh one before each test of the enclosing describe
 * (`createStore`), destroyed after it (`destroyStore`). Every method goes to that store.
 */
function storePerTest(options: SessionStoreConformanceOptions): TrashingSessionStore {
  let current: CompleteSessionStore | undefined;
  beforeEach(async () => {
    current = await options.createStore();
  });
  afterEach(async () => {
    await options.destroyStore?.(current!);
  });
  const now = (): CompleteSessionStore => {
    if (!current) throw new Error("the conformance suite's store exists only while a test runs");
    return current;
  };
  // Reached only by the trash's cases, which run where `options.trash` says the store has one.
  const trash = () => now() as unknown as TrashingSessionStore;
  return {
    append: (key, entries, operation) => now().append(key, entries, operation),
    load: (key, operation) => now().load(key, operation),
    listSessions: (projectKey, operation) => now().listSessions(projectKey, operation),
    listSessionSummaries: (projectKey, operation) => now().listSessionSummaries(projectKey, operation),
    delete: (key, operation) => now().delete(key, operation),
    listSubkeys: (key, operation) => now().listSubkeys(key, operation),
    listTrash: (projectKey, operation) => trash().listTrash(projectKey, operation),
    restoreFromTrash: (projectKey, trashId, operation) =>
      trash().restoreFromTrash(projectKey, trashId, operation),
    purgeFromTrash: (projectKey, trashId, operation) =>
      trash().purgeFromTrash(projectKey, trashId, operation),
    purgeExpiredTrash: (operation) => trash().purgeExpiredTrash(operation),
  };
}

/** The 13 behaviours the SDK publishes for its reference adapters, written from their descriptions. */
function describePublishedBehaviours(store: CompleteSessionStore): void {
  describe("the SDK's published behaviours", () => {
    it("1. load gives back what append stored, in order, deep-equal", async () => {
      const entries = [
        entry("user", { uuid: "u1", message: { content: [{ type: "text", text: "héllo 😀" }] } }),
        entry("assistant", { uuid: "u2", nested: { list: [1, 2.5, -0.125, null, true, { x: "" }] } }),
        entry("system", { text: 'NUL \u0000, quote " backslash \\, newline \n, lone \ud800', empty: {} }),
      ];
      await store.append(main, entries);
      expect(await store.load(main)).toEqual(entries);
    });

    it("2. load of a key never written is null, main and subpath", async () => {
      expect(await store.load(main)).toBeNull();
      expect(await store.load(sub("subagents/agent-a"))).toBeNull();
    });

    it("3. successive appends keep their call order", async () => {
      await store.append(main, [entry("one")]);
      await store.append(main, [entry("two"), entry("three")]);
      await store.append(main, [entry("four")]);
      expect((await store.load(main))?.map((e) => e.type)).toEqual(["one", "two", "three", "four"]);
    });

    it("4. an empty append changes nothing: a key never written stays null", async () => {
      await store.append(main, []);
      expect(await store.load(main)).toBeNull();
      expect(await store.listSessions(main.projectKey)).toEqual([]);
      await store.append(main, [entry("one")]);
      await store.append(main, []);
      expect(await store.load(main)).toEqual([entry("one")]);
    });

    it("5. a subpath transcript is stored apart from the main one", async () => {
      await store.append(main, [entry("main")]);
      await store.append(sub("subagents/agent-x"), [entry("sub")]);
      expect(await store.load(main)).toEqual([entry("main")]);
      expect(await store.load(sub("subagents/agent-x"))).toEqual([entry("sub")]);
    });

    it("6. projects are isolated: one session id in two projects is two transcripts", async () => {
      await store.append({ projectKey: "A", sessionId: "s" }, [entry("in-a")]);
      await store.append({ projectKey: "B", sessionId: "s" }, [entry("in-b")]);
      expect(await store.load({ projectKey: "A", sessionId: "s" })).toEqual([entry("in-a")]);
      expect(await store.load({ projectKey: "B", sessionId: "s" })).toEqual([entry("in-b")]);
    });

    it("7. listSessions gives the project's sessions with millisecond mtimes, [] for an unknown project", async () => {
      const before = Date.now();
      await store.append({ projectKey: "P", sessionId: "s1" }, [entry("a")]);
      await store.append({ projectKey: "P", sessionId: "s2" }, [entry("b")]);
      await store.append({ projectKey: "Q", sessionId: "s3" }, [entry("c")]);
      const listed = await store.listSessions("P");
      expect(sorted(listed.map((s) => s.sessionId))).toEqual(["s1", "s2"]);
      for (const { mtime } of listed) {
        expect(Number.isInteger(mtime)).toBe(true);
        // Storage clocks (S3's LastModified has whole seconds) may trail ours a little.
        expect(mtime).toBeGreaterThan(before - 5_000);
        expect(mtime).toBeLessThan(Date.now() + 60_000);
      }
      expect(await store.listSessions("never-seen")).toEqual([]);
    });

    it("8. listSessions leaves out a session that has only subpath transcripts", async () => {
      await store.append({ projectKey: "P", sessionId: "s1", subpath: "subagents/agent-x" }, [entry("sub")]);
      expect((await store.listSessions("P")).map((s) => s.sessionId)).not.toContain("s1");
    });

    it("9. delete of a main transcript makes load null; deleting what was never written is fine", async () => {
      await store.append(main, [entry("a")]);
      await store.delete(main);
      expect(await store.load(main)).toBeNull();
      expect(await store.listSessions(main.projectKey)).toEqual([]);
      await store.delete({ projectKey: "x", sessionId: "never" });
    });

    it("10. delete of a main transcript takes its subpaths, and nothing of other sessions or projects", async () => {
      await store.append(main, [entry("main")]);
      await store.append(sub("subagents/a"), [entry("sa")]);
      await store.append(sub("subagents/b"), [entry("sb")]);
      await store.append({ projectKey: "proj", sessionId: "other" }, [entry("o")]);
      await store.append({ projectKey: "proj", sessionId: "sess2" }, [entry("prefix-sibling")]);
      await store.append({ projectKey: "proj2", sessionId: "sess" }, [entry("p2")]);
      await store.delete(main);
      expect(await store.load(main)).toBeNull();
      expect(await store.load(sub("subagents/a"))).toBeNull();
      expect(await store.load(sub("subagents/b"))).toBeNull();
      expect(await store.listSubkeys(main)).toEqual([]);
      expect(await store.load({ projectKey: "proj", sessionId: "other" })).toEqual([entry("o")]);
      expect(await store.load({ projectKey: "proj", sessionId: "sess2" })).toEqual([entry("prefix-sibling")]);
      expect(await store.load({ projectKey: "proj2", sessionId: "sess" })).toEqual([entry("p2")]);
    });

    it("11. delete of a subpath removes that transcript only (not main, siblings or deeper subpaths)", async () => {
      await store.append(main, [entry("main")]);
      await store.append(sub("subagents/a"), [entry("sa")]);
      await store.append(sub("subagents/a/deep"), [entry("deep")]);
      await store.append(sub("subagents/b"), [entry("sb")]);
      await store.delete(sub("subagents/a"));
      expect(await store.load(main)).toEqual([entry("main")]);
      expect(await store.load(sub("subagents/a"))).toBeNull();
      expect(await store.load(sub("subagents/a/deep"))).toEqual([entry("deep")]);
      expect(await store.load(sub("subagents/b"))).toEqual([entry("sb")]);
    });

    it("12. listSubkeys gives the session's subpaths, not another session's", async () => {
      await store.append(sub("subagents/a"), [entry("sa")]);
      await store.append(sub("subagents/b"), [entry("sb")]);
      await store.append({ projectKey: "proj", sessionId: "other", subpath: "subagents/c" }, [entry("sc")]);
      expect(sorted(await store.listSubkeys(main))).toEqual(["subagents/a", "subagents/b"]);
    });

    it("13. listSubkeys leaves out the main transcript; [] for a session never written", async () => {
      await store.append(main, [entry("main")]);
      expect(await store.listSubkeys(main)).toEqual([]);
      expect(await store.listSubkeys({ projectKey: "x", sessionId: "never" })).toEqual([]);
    });
  });
}

/** The SDK's own round trip through the store: `importSessionToStore`, `getSessionMessages`, `listSessions`. */
function itRoundTripsThroughTheSdk(store: CompleteSessionStore, configDir: string): void {
  it("the SDK's round trip: importSessionToStore, then getSessionMessages and listSessions through the store", async () => {
    const sdk = await import("@anthropic-ai/claude-agent-sdk");
    const work = join(configDir, "..", `work-${randomUUID().slice(0, 8)}`);
    await mkdir(work, { recursive: true });
    const cwd = await realpath(work);
    const sessionId = randomUUID();
    const files = realisticSessionTree({
      sessionId,
      cwd,
      mainBytes: 200_000,
      subagents: 2,
      legacyAgents: 0,
    });
    const location = await writeSessionTree({ configDir, cwd, sessionId, files });
    const reference = new sdk.InMemorySessionStore();
    await sdk.importSessionToStore(sessionId, store, { dir: cwd });
    await sdk.importSessionToStore(sessionId, reference, { dir: cwd });
    const key = { projectKey: location.projectKey, sessionId };
    const loaded = await store.load(key);
    expect(loaded?.length).toBeGreaterThan(20);
    expect(loaded).toEqual(await reference.load(key));
    const subkeys = sorted(await store.listSubkeys(key));
    expect(subkeys).toEqual(sorted(await reference.listSubkeys(key)));
    expect(subkeys).toHaveLength(2);
    for (const subpath of subkeys)
      expect(await store.load({ ...key, subpath })).toEqual(await reference.load({ ...key, subpath }));
    const [summary] = await store.listSessionSummaries(location.projectKey);
    expect(summary?.data).toEqual((await reference.listSessionSummaries(location.projectKey))[0]?.data);
    // Importing again (a retry) stores no uuid-bearing entry twice; uuid-less lines (snapshots,
    // summaries) are appended again, as the contract asks.
    await sdk.importSessionToStore(sessionId, store, { dir: cwd });
    const replayed = (await store.load(key))!;
    const withUuid = (entries: SessionStoreEntry[]) => entries.filter((e) => e.uuid !== undefined);
    expect(withUuid(replayed)).toEqual(withUuid(loaded!));
    expect(replayed.length).toBe(loaded!.length + loaded!.filter((e) => e.uuid === undefined).length);
    const fromFiles = await sdk.getSessionMessages(sessionId, { dir: cwd });
    expect(fromFiles.length).toBeGreaterThan(5);
    expect(await sdk.getSessionMessages(sessionId, { dir: cwd, sessionStore: store })).toEqual(fromFiles);
    const listed = await sdk.listSessions({ dir: cwd, sessionStore: store });
    expect(listed.map((info) => info.sessionId)).toEqual([sessionId]);
    const [local] = (await sdk.listSessions({ dir: cwd })).filter((info) => info.sessionId === sessionId);
    expect(listed[0]!.summary).toBe(local!.summary);
  }, 120_000);
}

/** Idempotency on `uuid`, opaque session ids, the SDK's summaries, concurrent appends. */
function itKeepsEntriesOnceAndFoldsSummaries(store: CompleteSessionStore): void {
  it("append is idempotent on uuid (across batches and within one); uuid-less entries are stored each time", async () => {
    const a = entry("user", { uuid: "u-a", n: 1 });
    const b = entry("assistant", { uuid: "u-b", n: 2 });
    const title = entry("custom-title", { customTitle: "T" });
    await store.append(main, [a, b, a]);
    await store.append(main, [b, title]);
    await store.append(main, [a, title, entry("user", { uuid: "u-c", n: 3 })]);
    expect(await store.load(main)).toEqual([a, b, title, title, entry("user", { uuid: "u-c", n: 3 })]);
    await store.append(main, [a, b]); // a retry of what is stored: nothing new
    expect(await store.load(main)).toHaveLength(5);
  });

  it("session ids are opaque safe ids, UUID or not", async () => {
    for (const sessionId of ["s1", "ses_01JABCDEF", randomUUID(), "thread:42@host", "a".repeat(128)]) {
      await store.append({ projectKey: "-workspace-app", sessionId }, [entry("user", { sessionId })]);
      expect(await store.load({ projectKey: "-workspace-app", sessionId })).toEqual([
        entry("user", { sessionId }),
      ]);
    }
    expect(await store.listSessions("-workspace-app")).toHaveLength(5);
  });

  it("listSessionSummaries folds what was stored with the SDK's foldSessionSummary, on listSessions' clock", async () => {
    const fold = await loadSummaryFold();
    const first = [
      entry("user", {
        uuid: "u1",
        timestamp: "2026-01-01T00:00:00.000Z",
        message: { role: "user", content: "first prompt" },
      }),
      entry("custom-title", { customTitle: "A title" }),
    ];
    const second = [
      entry("assistant", {
        uuid: "u2",
        timestamp: "2026-01-01T00:00:01.000Z",
        message: { role: "assistant", content: "ok" },
      }),
    ];
    await store.append(main, first);
    await store.append(main, [...second, first[0]!]); // the repeated uuid is not folded again
    await store.append(sub("subagents/a"), [
      entry("user", { uuid: "sub1", message: { content: "not in the summary" } }),
    ]);
    await store.append({ projectKey: "proj", sessionId: "only-sub", subpath: "subagents/b" }, [entry("x")]);
    const summaries = await store.listSessionSummaries("proj");
    expect(summaries.map((s) => s.sessionId)).toEqual(["sess"]);
    const expected = fold(fold(undefined, main, first), main, second);
    expect(summaries[0]!.data).toEqual(expected.data);
    const [listed] = await store.listSessions("proj");
    expect(summaries[0]!.mtime).toBe(listed!.mtime);
    expect(await store.listSessionSummaries("never-seen")).toEqual([]);
  });

  it("concurrent appends to one key: every batch stored once, whole and contiguous", async () => {
    const batches = Array.from({ length: 12 }, (_, batch) =>
      Array.from({ length: 5 }, (_, n) => entry("user", { uuid: `b${batch}-${n}`, batch, n })),
    );
    await Promise.all(batches.map((batch) => store.append(main, batch)));
    const loaded = (await store.load(main))!;
    expect(loaded).toHaveLength(60);
    for (let start = 0; start < loaded.length; start += 5) {
      expect(loaded.slice(start, start + 5)).toEqual(batches[loaded[start]!.batch as number]);
    }
  });
}

/** Hostile keys and batches refused, uuids opaque, the same key limits everywhere, abort. */
function itRefusesWhatNoBackendStores(store: CompleteSessionStore): void {
  it("rejects hostile keys and malformed batches with INVALID_INPUT, writing nothing", async () => {
    // A leading dash is how the SDK's own project keys start ("-workspace-app"): not hostile there.
    for (const { value } of HOSTILE_IDS.filter(({ why }) => why !== "leading dash")) {
      for (const key of [
        { projectKey: value, sessionId: "sess" },
        { projectKey: "proj", sessionId: value },
      ] as SessionKey[]) {
        await expectStowageError(store.append(key, [entry("user")]), "INVALID_INPUT");
        await expectStowageError(store.load(key), "INVALID_INPUT");
        await expectStowageError(store.delete(key), "INVALID_INPUT");
        await expectStowageError(store.listSubkeys(key), "INVALID_INPUT");
      }
      await expectStowageError(store.listSessions(value as string), "INVALID_INPUT");
      await expectStowageError(store.listSessionSummaries(value as string), "INVALID_INPUT");
    }
    await expectStowageError(store.load({ projectKey: "proj", sessionId: "-rf" }), "INVALID_INPUT");
    for (const { value } of [
      ...HOSTILE_KEYS.filter(({ value }) => value !== undefined),
      { value: "" },
      // One byte over MAX_SUBPATH_BYTES (512), in segments a file system takes: a database
      // column would hold it, an object key of 1,024 bytes with the rest of the key would not.
      { value: `${"a".repeat(255)}/${"b".repeat(255)}/c` },
      { value: `${"é".repeat(127)}/${"é".repeat(127)}/éa` },
      // Segments one backend cannot hold (an object store's part name, the file-system store's
      // writes in progress): a database would take them, so none does.
      { value: "part-000000000001-000000000001.jsonl" },
      { value: "subagents/part-000000000003-000000000007.jsonl" },
      { value: ".stowage-tmp-x" },
      { value: "subagents/.stowage-tmp-1/deep" },
    ]) {
      await expectStowageError(store.append(sub(value as string), [entry("user")]), "INVALID_INPUT");
      await expectStowageError(store.load(sub(value as string)), "INVALID_INPUT");
      await expectStowageError(store.delete(sub(value as string)), "INVALID_INPUT");
    }
    const cyclic: Record<string, unknown> = { type: "user" };
    cyclic.self = cyclic;
    for (const batch of [
      "not an array",
      [null],
      [{ uuid: "no type" }],
      [{ type: 5 }],
      [["type", "user"]],
      [{ type: "user", uuid: 42 }],
      [{ type: "user", uuid: "" }],
      [{ type: "user", uuid: "x".repeat(256) }],
      // What one backend cannot store, none accepts: PostgreSQL's text holds no NUL and JSON
      // text no lone surrogate, so an object store must not take them either.
      [{ type: "user", uuid: "a\u0000b" }],
      [{ type: "user", uuid: "\ud800" }],
      [{ type: "user", uuid: "x\udc00y" }],
      [{ type: "user", uuid: "\udc00\ud800" }],
      [{ type: "user", uuid: "a\u0007b" }],
      [{ type: "user", uuid: "line\nbreak" }],
      [{ type: "user", uuid: "a\u001b[31m" }],
      [{ type: "user", uuid: "del\u007f" }],
      [
        { type: "user", uuid: "ok" },
        { type: "user", uuid: "\u0000" },
      ],
      [{ type: "user", big: 10n }],
      [cyclic],
      // Stored as another object than the one whose uuid would be checked.
      [{ type: "user", uuid: "shown", toJSON: () => ({ type: "user", uuid: "stored" }) }],
      Array.from({ length: MAX_APPEND_ENTRIES + 1 }, () => ({ type: "user" })),
    ]) {
      await expectStowageError(store.append(main, batch as SessionStoreEntry[]), "INVALID_INPUT");
    }
    expect(await store.load(main)).toBeNull();
    expect(await store.listSessions(main.projectKey)).toEqual([]);
  });

  it("listSubkeys is in code-point order (UTF-8 byte order) on every backend, not UTF-16 order", async () => {
    for (const subpath of ["\u{10000}", "\uffff", "b", "\ue000", "Z", "subagents/a", "subagents"])
      await store.append(sub(subpath), [entry("user")]);
    expect(await store.listSubkeys(main)).toEqual([
      "Z",
      "b",
      "subagents",
      "subagents/a",
      "\ue000",
      "\uffff",
      "\u{10000}",
    ]);
  });

  it("entry uuids are opaque text, stored and matched exactly: any well-formed string without control characters", async () => {
    const uuids = [
      "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10",
      "😀 emoji",
      "\u00e9 precomposed",
      "e\u0301 decomposed", // not the same uuid as the one above
      "  spaces  ",
      'quote " backslash \\ slash /',
      "line\u2028separator",
      "x".repeat(255),
      "😀".repeat(127), // 254 UTF-16 units
    ];
    const stored = uuids.map((uuid, n) => entry("user", { uuid, n }));
    await store.append(main, stored);
    await store.append(main, [...stored].reverse()); // every one known: nothing new
    expect(await store.load(main)).toEqual(stored);
  });

  it(`the limits of a key are the same on every backend: a ${MAX_SUBPATH_BYTES}-byte subpath under the longest project key and session id`, async () => {
    const key: SessionKey = {
      projectKey: "p".repeat(255),
      sessionId: "s".repeat(128),
      // 512 UTF-8 bytes in segments of at most 255 bytes, two bytes a character in the last.
      subpath: `${"a".repeat(255)}/${"b".repeat(127)}/${"é".repeat(64)}`,
    };
    await store.append(key, [entry("user", { uuid: "u" })]);
    expect(await store.load(key)).toEqual([entry("user", { uuid: "u" })]);
    expect(await store.listSubkeys(key)).toEqual([key.subpath]);
    await store.delete(key);
    expect(await store.load(key)).toBeNull();
  });

  it("an aborted signal fails with ABORTED and writes nothing", async () => {
    const controller = new AbortController();
    controller.abort();
    await expectStowageError(store.append(main, [entry("user")], { signal: controller.signal }), "ABORTED");
    expect(await store.load(main)).toBeNull();
  });
}

/**
 * The behaviour every Claude Agent SDK `SessionStore` Stowage ships must have: the 13 behaviours
 * the SDK publishes for its reference adapters (written here from their descriptions), then what
 * Stowage adds (idempotency on `uuid`, opaque but safe ids, summaries folded by the SDK's own
 * `foldSessionSummary`, hostile inputs refused, images and documents given back exactly). A store's test file calls it and adds only what
 * is specific to that store. Needs vitest and the SDK (for `foldSessionSummary`).
 */
export function describeSessionStoreConformance(options: SessionStoreConformanceOptions): void {
  const { name } = options;
  if (options.skip) {
    console.warn(`[stowage] ${name} conformance skipped: ${options.skip}`);
    describe.skip(`${name} conformance (skipped: ${options.skip})`, () => {
      it("needs its backend", () => {});
    });
    return;
  }

  describe(`${name} conformance`, () => {
    const store = storePerTest(options);
    describePublishedBehaviours(store);
    if (options.claudeConfigDir) itRoundTripsThroughTheSdk(store, options.claudeConfigDir);
    describe("what Stowage adds", () => {
      itKeepsEntriesOnceAndFoldsSummaries(store);
      itRefusesWhatNoBackendStores(store);
      describeImagePayloads(store);
      if (options.trash) describeSessionStoreTrash(store);
    });
  });
}
