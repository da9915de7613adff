import { createHash, randomUUID } from "node:crypto";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SessionStore } from "@anthropic-ai/claude-agent-sdk";
import {
  createMemoryObjectStore,
  type ObjectStore,
  type StowageError,
  type StowageErrorCode,
} from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { createFsObjectStore } from "@stowage/storage-fs";
import { createS3Client, createS3ObjectStore } from "@stowage/storage-s3";
import { runChild, s3ClientOptions, s3TestEnv, tempDirectory } from "@stowage/test-support";
import { describe, expect, it, vi } from "vitest";
import { createObjectSessionStore } from "../../src/session-store/object-session-store.js";
import { partName } from "../../src/session-store/part-object.js";
import { assertAgentSdkInstalled } from "../../src/session-store/summary-fold.js";
import type { SessionStoreEntry } from "../../src/session-store/types.js";
import { describeSessionStoreConformance } from "../../src/testing/session-store-conformance.js";

// The SDK reads CLAUDE_CONFIG_DIR once per process; vitest runs this file in its own fork.
const claudeConfigDir = join(await tempDirectory("stowage-session-store-sdk-"), ".claude");
process.env.CLAUDE_CONFIG_DIR = claudeConfigDir;

describeSessionStoreConformance({
  name: "object SessionStore on memory",
  claudeConfigDir,
  trash: true,
  createStore: () => createObjectSessionStore({ store: createMemoryObjectStore(), compactAfterParts: 2 }),
});

describeSessionStoreConformance({
  name: "object SessionStore on fs",
  claudeConfigDir,
  trash: true,
  createStore: async () =>
    createObjectSessionStore({
      store: createFsObjectStore({ root: await tempDirectory("stowage-session-store-") }),
    }),
});

const s3 = s3TestEnv("object SessionStore");
const s3Client = () => createS3Client(s3ClientOptions(s3));
const s3Objects = new WeakMap<object, ObjectStore>();
describeSessionStoreConformance({
  name: "object SessionStore on S3 (Ceph RGW)",
  claudeConfigDir,
  trash: true,
  ...(s3.ready ? {} : { skip: s3.reason }),
  createStore: () => {
    const objects = createS3ObjectStore({
      client: s3Client(),
      bucket: s3.values.S3_BUCKET!,
      prefix: `test/session-store/${randomUUID()}/`,
    });
    const store = createObjectSessionStore({ store: objects, compactAfterParts: 3 });
    s3Objects.set(store, objects);
    return store;
  },
  // RGW keeps every object in memory: each test empties its own prefix.
  destroyStore: async (store) => {
    const objects = s3Objects.get(store)!;
    for (const key of await keysOf(objects)) await objects.delete(key);
  },
});

const user = (uuid: string, extra: Record<string, unknown> = {}): SessionStoreEntry => ({
  type: "user",
  uuid,
  ...extra,
});
const key = { projectKey: "-workspace-app", sessionId: "s1" };

/** `objects`, as a process that dies at its move after `moves` of them (a delete or restore cut short). */
function crashingAfterMoves(objects: ObjectStore, moves: number): ObjectStore {
  let done = 0;
  return {
    ...objects,
    move: async (from, to, options) => {
      if (++done > moves) throw new Error("crash");
      return objects.move(from, to, options);
    },
  };
}

async function keysOf(store: ObjectStore): Promise<string[]> {
  const keys: string[] = [];
  for await (const item of store.iterate()) keys.push(item.key);
  return keys;
}

describe("createObjectSessionStore", () => {
  it("type-checks as the SDK's own SessionStore type", () => {
    const asSdkType: SessionStore = createObjectSessionStore({ store: createMemoryObjectStore() });
    expect(typeof asSdkType.listSessionSummaries).toBe("function");
  });

  it("writes one part per append under <prefix>/<projectKey>/<sessionId>[/<subpath>]/, create-only", async () => {
    const objects = createMemoryObjectStore();
    const store = createObjectSessionStore({
      store: objects,
      prefix: "tenants/acme/sessions",
      compactAfterParts: 0,
    });
    await store.append(key, [user("a")]);
    await store.append(key, [user("b"), user("c")]);
    await store.append({ ...key, subpath: "subagents/agent-1" }, [user("x")]);
    expect(await keysOf(objects)).toEqual([
      "tenants/acme/sessions/-workspace-app/s1/part-000000000001-000000000001.jsonl",
      "tenants/acme/sessions/-workspace-app/s1/part-000000000002-000000000002.jsonl",
      "tenants/acme/sessions/-workspace-app/s1/subagents/agent-1/part-000000000001-000000000001.jsonl",
    ]);
    // Each part: a header line (entries per sequence, the summary so far), then one JSON line per entry.
    const text = new TextDecoder().decode(
      (await objects.get("tenants/acme/sessions/-workspace-app/s1/part-000000000002-000000000002.jsonl"))!,
    );
    const lines = text.split("\n");
    // Format 2: the header is bound to the part's own object key by its SHA-256.
    expect(JSON.parse(lines[0]!)).toMatchObject({
      stowageSessionPart: 2,
      keySha256: createHash("sha256")
        .update("tenants/acme/sessions/-workspace-app/s1/part-000000000002-000000000002.jsonl")
        .digest("hex"),
      counts: [2],
      summary: { sessionId: "s1" },
    });
    expect(lines.slice(1)).toEqual([JSON.stringify(user("b")), JSON.stringify(user("c")), ""]);
  });

  it("keeps the call order of concurrent appends from one process", async () => {
    const store = createObjectSessionStore({ store: createMemoryObjectStore(), compactAfterParts: 4 });
    const batches = Array.from({ length: 12 }, (_, batch) => [
      user(`b${batch}-0`, { batch }),
      user(`b${batch}-1`, { batch }),
    ]);
    await Promise.all(batches.map((batch) => store.append(key, batch)));
    expect(await store.load(key)).toEqual(batches.flat());
  });

  it("compacts every N single parts into one range part and empties the parts it replaced", async () => {
    const objects = createMemoryObjectStore();
    const store = createObjectSessionStore({ store: objects, compactAfterParts: 3 });
    const expected: SessionStoreEntry[] = [];
    for (let i = 0; i < 7; i++) {
      const batch = [user(`u${i}`, { i }), { type: "progress", i }];
      expected.push(...batch);
      await store.append(key, batch);
      expect(await store.load(key)).toEqual(expected);
    }
    const sizes = new Map<string, number>();
    for await (const item of objects.iterate({ prefix: "session-store/-workspace-app/s1/" }))
      sizes.set(item.key.split("/").at(-1)!, item.size);
    expect([...sizes.keys()]).toEqual([
      partName(1, 1),
      partName(1, 3),
      partName(2, 2),
      partName(3, 3),
      partName(4, 4),
      partName(4, 6),
      partName(5, 5),
      partName(6, 6),
      partName(7, 7),
    ]);
    for (const name of [partName(1, 1), partName(2, 2), partName(6, 6)]) expect(sizes.get(name)).toBe(0);
    expect(sizes.get(partName(7, 7))).toBeGreaterThan(0);
    // A second store (another process) reads it all back, and its append continues the sequence.
    const other = createObjectSessionStore({ store: objects, compactAfterParts: 0 });
    expect(await other.load(key)).toEqual(expected);
    await other.append(key, [user("u0"), user("u-new")]);
    expect(await other.load(key)).toEqual([...expected, user("u-new")]);
    await other.compact(key);
    expect(await store.load(key)).toEqual([...expected, user("u-new")]);
    const live = [];
    for await (const item of objects.iterate({ prefix: "session-store/-workspace-app/s1/" }))
      if (item.size > 0) live.push(item.key.split("/").at(-1));
    expect(live).toEqual([partName(1, 8)]);
  });

  it("two stores (two processes' views) appending and compacting one session lose nothing and store each uuid once", async () => {
    const objects = createMemoryObjectStore();
    const writers = [1, 2, 3].map(() => createObjectSessionStore({ store: objects, compactAfterParts: 2 }));
    const sent: string[] = [];
    // Interleaved: each writer's view goes stale between its appends, and compactions of the
    // others' parts run meanwhile; a retry re-sends a batch already stored.
    for (let round = 0; round < 10; round++) {
      await Promise.all(
        writers.map((writer, w) => {
          const batch = [user(`w${w}-r${round}`, { w, round }), user(`w${w}-r${round}-b`, { w, round })];
          sent.push(...batch.map((e) => e.uuid!));
          return writer
            .append(key, batch)
            .then(() => (round % 3 === 0 ? writer.append(key, batch) : undefined));
        }),
      );
    }
    const loaded = (await writers[0]!.load(key))!;
    expect(loaded.map((e) => e.uuid).sort()).toEqual([...sent].sort());
    for (const w of [0, 1, 2]) {
      const rounds = loaded.filter((e) => e.w === w).map((e) => e.round as number);
      expect(rounds).toEqual([...rounds].sort((a, b) => a - b));
    }
  });

  describe.each([
    ["memory", async () => createMemoryObjectStore()],
    ["fs", async () => createFsObjectStore({ root: await tempDirectory("stowage-session-store-stale-") })],
  ])("another process's view, on %s", (_name, createObjects) => {
    it("an entry appended again after another process deleted the session is stored, not skipped as known", async () => {
      const objects = await createObjects();
      const a = createObjectSessionStore({ store: objects, compactAfterParts: 0 });
      const b = createObjectSessionStore({ store: objects, compactAfterParts: 3 });
      await a.append(key, [user("a-0")]);
      await a.append(key, [user("a-1"), user("a-2")]);
      await b.delete(key);
      await a.append(key, [user("a-0")]);
      expect((await b.load(key))?.map((e) => e.uuid)).toEqual(["a-0"]);
      // Deleted and written again by the other process, under the sequence numbers the cache knew.
      await b.delete(key);
      await b.append(key, [user("b-0")]);
      await b.append(key, [user("b-1")]);
      await a.append(key, [user("a-0"), user("a-new")]);
      expect((await a.load(key))?.map((e) => e.uuid)).toEqual(["b-0", "b-1", "a-0", "a-new"]);
    });

    it("a compaction by another process loses nothing and lets no entry in twice", async () => {
      const objects = await createObjects();
      const a = createObjectSessionStore({ store: objects, compactAfterParts: 3 });
      const b = createObjectSessionStore({ store: objects, compactAfterParts: 0 });
      for (let i = 0; i < 5; i++) await a.append(key, [user(`a-${i}`)]);
      await b.compact(key);
      await a.append(key, [user("a-1"), user("a-4"), user("a-5")]);
      await a.append(key, [user("a-6")]);
      await b.append(key, [user("a-6"), user("b-0")]);
      await b.compact(key);
      await a.append(key, [user("a-2"), user("b-0"), user("a-7")]);
      const expected = ["a-0", "a-1", "a-2", "a-3", "a-4", "a-5", "a-6", "b-0", "a-7"];
      expect((await a.load(key))?.map((e) => e.uuid)).toEqual(expected);
      expect((await b.load(key))?.map((e) => e.uuid)).toEqual(expected);
    });

    it("loads racing another process's appends and compactions read whole transcripts: never entries lost", async () => {
      const objects = await createObjects();
      const writer = createObjectSessionStore({ store: objects, compactAfterParts: 2 });
      const sent = Array.from({ length: 40 }, (_, i) => user(`w-${i}`));
      let writing = true;
      const written = (async () => {
        for (const entry of sent) await writer.append(key, [entry]);
        await writer.compact(key);
        writing = false;
      })();
      let loads = 0;
      while (writing && loads < 2_000) {
        const loaded = (await createObjectSessionStore({ store: objects }).load(key)) ?? [];
        expect(loaded).toEqual(sent.slice(0, loaded.length));
        loads++;
      }
      await written;
      expect(loads).toBeGreaterThan(5);
      expect(await createObjectSessionStore({ store: objects }).load(key)).toEqual(sent);
    });

    it("a load while another process deletes the session reads it whole, its end or nothing: never entries lost", async () => {
      const objects = await createObjects();
      const writer = createObjectSessionStore({ store: objects, compactAfterParts: 3 });
      const sent = Array.from({ length: 20 }, (_, i) => user(`d-${i}`));
      for (const entry of sent) await writer.append(key, [entry]);
      // Every removal is followed by a load of another process, while the other removals run.
      const seen: unknown[] = [];
      const look = async () =>
        seen.push(
          await createObjectSessionStore({ store: objects })
            .load(key)
            .catch((err: StowageError) => `${err.code} ${err.reason}`),
        );
      // A delete for good removes each object; one into the trash moves it.
      const deleting: ObjectStore = {
        ...objects,
        delete: async (objectKey, options) => {
          await objects.delete(objectKey, options);
          await look();
        },
        move: async (from, to, options) => {
          const moved = await objects.move(from, to, options);
          await look();
          return moved;
        },
      };
      await createObjectSessionStore({ store: deleting }).delete(key, { trashDays: 0 });
      expect(seen.length).toBeGreaterThan(20);
      const intoTheTrash = seen.length;
      for (const entry of sent) await writer.append(key, [entry]);
      await createObjectSessionStore({ store: deleting }).delete(key);
      expect(seen.length - intoTheTrash).toBeGreaterThan(20);
      for (const loaded of seen) {
        if (loaded === null) continue;
        expect(loaded).toEqual(sent.slice(sent.length - (loaded as SessionStoreEntry[]).length));
      }
    });

    it("a compaction after another process deleted the session does not bring the deleted entries back", async () => {
      const objects = await createObjects();
      const a = createObjectSessionStore({ store: objects, compactAfterParts: 3 });
      const b = createObjectSessionStore({ store: objects, compactAfterParts: 0 });
      await a.append(key, [user("gone-0")]);
      await a.append(key, [user("gone-1")]);
      await b.delete(key);
      // The third single part: a compaction of what this process believes it wrote.
      await a.append(key, [user("after")]);
      expect((await b.load(key))?.map((e) => e.uuid)).toEqual(["after"]);
    });

    it("the trash across processes: one deletes, another lists and restores, a third reads it whole", async () => {
      const objects = await createObjects();
      const sent = Array.from({ length: 6 }, (_, i) => user(`t-${i}`));
      const a = createObjectSessionStore({ store: objects, compactAfterParts: 3 });
      for (const entry of sent) await a.append(key, [entry]);
      await a.append({ ...key, subpath: "subagents/agent-1" }, [user("sub-0")]);
      await createObjectSessionStore({ store: objects }).delete(key);
      const b = createObjectSessionStore({ store: objects });
      const [item] = await b.listTrash(key.projectKey);
      expect(item).toMatchObject({ sessionId: key.sessionId });
      expect(await a.load(key)).toBeNull();
      await b.restoreFromTrash(key.projectKey, item!.trashId);
      const c = createObjectSessionStore({ store: objects });
      expect(await c.load(key)).toEqual(sent);
      expect(await c.load({ ...key, subpath: "subagents/agent-1" })).toEqual([user("sub-0")]);
      // The first process appends on, after what came back, each uuid once.
      await a.append(key, [sent[0]!, user("t-6")]);
      expect((await c.load(key))?.map((e) => e.uuid)).toEqual([...sent.map((e) => e.uuid), "t-6"]);
    });

    it("a restore cut short while it moves back: a purge refuses, the sweep finishes the restore", async () => {
      const objects = await createObjects();
      const sent = Array.from({ length: 8 }, (_, i) => user(`r-${i}`));
      for (const entry of sent) await createObjectSessionStore({ store: objects }).append(key, [entry]);
      const store = createObjectSessionStore({ store: objects });
      // Trash days over at once: the next sweep finds the entry due.
      await store.delete(key, { trashDays: 1e-9 });
      const [item] = await store.listTrash(key.projectKey);
      const crashing = crashingAfterMoves(objects, 3);
      await expect(
        createObjectSessionStore({ store: crashing }).restoreFromTrash(key.projectKey, item!.trashId),
      ).rejects.toThrow();
      await expectStowageError(
        store.purgeFromTrash(key.projectKey, item!.trashId),
        "CONFLICT",
        "RESTORE_UNFINISHED",
      );
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await store.purgeExpiredTrash()).toBe(0);
      expect(await store.load(key)).toEqual(sent);
      expect(await store.listTrash(key.projectKey)).toEqual([]);
    });

    it("two deletes in one millisecond list oldest first (ids are not left to their random part)", async () => {
      vi.useFakeTimers({ toFake: ["Date"] });
      vi.setSystemTime(Date.now());
      try {
        const store = createObjectSessionStore({ store: await createObjects() });
        for (let round = 0; round < 8; round++) {
          await store.append(key, [user(`r${round}`)]);
          await store.delete(key);
        }
        const listed = await store.listTrash(key.projectKey);
        const rounds: string[] = [];
        // Newest first back, each taken out of the trash and read, then deleted again.
        for (const item of [...listed].reverse()) {
          await store.restoreFromTrash(key.projectKey, item.trashId);
          rounds.unshift((await store.load(key))![0]!.uuid as string);
          await store.delete(key, { trashDays: 0 });
        }
        expect(rounds).toEqual(Array.from({ length: 8 }, (_, round) => `r${round}`));
      } finally {
        vi.useRealTimers();
      }
    });

    it("a delete cut short while it moves loses nothing: deleting again, then restoring the newer and the older, puts all back", async () => {
      const objects = await createObjects();
      const sent = Array.from({ length: 8 }, (_, i) => user(`c-${i}`));
      for (const entry of sent) await createObjectSessionStore({ store: objects }).append(key, [entry]);
      const crashing = crashingAfterMoves(objects, 3);
      await expect(createObjectSessionStore({ store: crashing }).delete(key)).rejects.toThrow();
      const store = createObjectSessionStore({ store: objects });
      // What did not move is still there (read or refused, never half given as whole).
      await store.load(key).then(
        (loaded) => expect(loaded === null || loaded.length < sent.length).toBe(true),
        (err: StowageError) => expect(err.code).toBe("INTEGRITY"),
      );
      await store.delete(key);
      expect(await store.load(key)).toBeNull();
      const [older, newer] = await store.listTrash(key.projectKey);
      expect(newer).toBeDefined();
      await store.restoreFromTrash(key.projectKey, newer!.trashId);
      await store.restoreFromTrash(key.projectKey, older!.trashId);
      expect(await store.load(key)).toEqual(sent);
      expect(await store.listTrash(key.projectKey)).toEqual([]);
    });
  });

  it("recognizes a lost create race whose error comes from another copy of @stowage/core", async () => {
    // Two versions of core in one install: the backend throws its copy's StowageError class.
    const secondCopy = `${fileURLToPath(new URL("../../../core/src/errors.ts", import.meta.url))}?second-copy`;
    const copy = (await import(/* @vite-ignore */ secondCopy)) as typeof import("@stowage/core");
    const objects = createMemoryObjectStore();
    const other = createObjectSessionStore({ store: objects });
    let raced = false;
    const foreignErrors: ObjectStore = {
      ...objects,
      put: async (objectKey, body, options) => {
        // Another writer takes the part this one is about to create.
        if (!raced) {
          raced = true;
          await other.append(key, [user("first")]);
        }
        try {
          return await objects.put(objectKey, body, options);
        } catch (err) {
          throw new copy.StowageError("ALREADY_EXISTS", (err as Error).message);
        }
      },
    };
    const store = createObjectSessionStore({ store: foreignErrors });
    await store.append(key, [user("second")]);
    expect((await store.load(key))!.map((e) => e.uuid)).toEqual(["first", "second"]);
  });

  it("a listing with entries missing that keeps changing is CONFLICT (a delete still running), one that stays is INTEGRITY", async () => {
    const objects = createMemoryObjectStore();
    for (let i = 0; i < 4; i++)
      await createObjectSessionStore({ store: objects }).append(key, [user(`u${i}`)]);
    const second = `session-store/-workspace-app/s1/${partName(2, 2)}`;
    const third = `session-store/-workspace-app/s1/${partName(3, 3)}`;
    // Each listing misses another part in the middle, as while a delete removes 16 at a time.
    let listings = 0;
    const moving: ObjectStore = {
      ...objects,
      iterate: (options) => {
        const hidden = listings++ % 2 === 0 ? second : third;
        return (async function* () {
          for await (const item of objects.iterate(options)) if (item.key !== hidden) yield item;
        })();
      },
    };
    await expectStowageError(
      createObjectSessionStore({ store: moving }).load(key),
      "CONFLICT",
      "PARTS_CHANGING",
    );
    await objects.delete(third);
    await expectStowageError(
      createObjectSessionStore({ store: objects }).load(key),
      "INTEGRITY",
      "MISSING_PART",
    );
  });

  it("a part read while a compaction empties it is read again from the range", async () => {
    const objects = createMemoryObjectStore();
    const store = createObjectSessionStore({ store: objects, compactAfterParts: 0 });
    for (let i = 0; i < 5; i++) await store.append(key, [user(`u${i}`)]);
    // A store whose `get` runs a compaction just before its first read: the listed part is empty by then.
    let compacted = false;
    const racing: ObjectStore = {
      ...objects,
      iterate: (options) => objects.iterate(options),
      get: async (k, options) => {
        if (!compacted) {
          compacted = true;
          await createObjectSessionStore({ store: objects }).compact(key);
        }
        return objects.get(k, options);
      },
    };
    expect((await createObjectSessionStore({ store: racing }).load(key))?.map((e) => e.uuid)).toEqual([
      "u0",
      "u1",
      "u2",
      "u3",
      "u4",
    ]);
  });

  it("a delete by another process while a compaction empties its parts leaves no empty part behind", async () => {
    const objects = createMemoryObjectStore();
    for (let i = 0; i < 3; i++)
      await createObjectSessionStore({ store: objects }).append(key, [user(`u${i}`)]);
    // The compaction has written its range and listed the parts to empty when the delete runs.
    let deleted = false;
    const racing: ObjectStore = {
      ...objects,
      put: async (objectKey, body, options) => {
        if (!deleted && body instanceof Uint8Array && body.byteLength === 0) {
          deleted = true;
          await createObjectSessionStore({ store: objects }).delete(key);
        }
        return objects.put(objectKey, body, options);
      },
    };
    await createObjectSessionStore({ store: racing }).compact(key);
    expect(deleted).toBe(true);
    // Nothing left where the transcript was; what the delete took is in the trash.
    expect((await keysOf(objects)).filter((objectKey) => !objectKey.includes("/~trash/"))).toEqual([]);
    expect(await createObjectSessionStore({ store: objects }).load(key)).toBeNull();
  });

  // Corrupt, foreign and missing parts: stored-parts.test.ts, written by hand.
  it("refuses a subpath segment named like a part", async () => {
    const store = createObjectSessionStore({ store: createMemoryObjectStore() });
    await expectStowageError(
      store.append({ ...key, subpath: `x/${partName(1, 1)}` }, [user("a")]),
      "INVALID_INPUT",
    );
  });

  it("loads text outside ASCII exactly, line by line (lines are decoded one at a time)", async () => {
    const store = createObjectSessionStore({ store: createMemoryObjectStore() });
    const entries = [
      user("ascii only"),
      user("é → 日本語 🙂"),
      user("next line"),
      user("u4", { text: "\u2028 and \u0000" }),
    ];
    await store.append(key, entries.slice(0, 2));
    await store.append(key, entries.slice(2));
    expect(await store.load(key)).toEqual(entries);
  });

  it("checks its options", async () => {
    await expectStowageError(() => createObjectSessionStore(undefined as never), "INVALID_INPUT");
    await expectStowageError(() => createObjectSessionStore({} as never), "INVALID_INPUT");
    const store = createMemoryObjectStore();
    for (const prefix of ["", "/abs", "a/../b", "trailing/"]) {
      await expectStowageError(() => createObjectSessionStore({ store, prefix }), "INVALID_INPUT");
    }
    // 89 bytes: a prefix, the longest project key (255), session id (128) and subpath (512), a part
    // name (36) and the four slashes between them make an object key of 1,024 bytes, no more.
    await expectStowageError(
      () => createObjectSessionStore({ store, prefix: "p".repeat(90) }),
      "INVALID_INPUT",
    );
    const longest = createObjectSessionStore({ store, prefix: "p".repeat(89) });
    const longestKey = {
      projectKey: "k".repeat(255),
      sessionId: "s".repeat(128),
      subpath: `${"a".repeat(255)}/${"b".repeat(254)}/c`,
    };
    await longest.append(longestKey, [user("u")]);
    expect(await longest.load(longestKey)).toEqual([user("u")]);
    for (const compactAfterParts of [-1, 1.5, Number.NaN]) {
      await expectStowageError(() => createObjectSessionStore({ store, compactAfterParts }), "INVALID_INPUT");
    }
  });

  it("says the limit it enforces in details.limit (limits are not exported: the README gives each)", async () => {
    const store = createObjectSessionStore({ store: createMemoryObjectStore() });
    const MiB = 1024 * 1024;
    const big = "x".repeat(64 * MiB);
    const cases: Array<[string, () => unknown, StowageErrorCode, number]> = [
      [
        "a prefix of 90 bytes",
        () => createObjectSessionStore({ store: createMemoryObjectStore(), prefix: "p".repeat(90) }),
        "INVALID_INPUT",
        89,
      ],
      [
        "a project key of 256 characters",
        () => store.append({ projectKey: "k".repeat(256), sessionId: "s1" }, [user("u")]),
        "INVALID_INPUT",
        255,
      ],
      [
        "a subpath of 513 bytes",
        () => store.append({ ...key, subpath: `${"a".repeat(255)}/${"b".repeat(255)}/c` }, [user("u")]),
        "INVALID_INPUT",
        512,
      ],
      [
        "an entry uuid of 256 characters",
        () => store.append(key, [user("u".repeat(256))]),
        "INVALID_INPUT",
        255,
      ],
      [
        "10,001 entries in one append",
        () =>
          store.append(
            key,
            Array.from({ length: 10_001 }, () => ({ type: "user" })),
          ),
        "INVALID_INPUT",
        10_000,
      ],
      [
        "an entry over 64 MiB as JSON",
        () => store.append(key, [user("big", { big })]),
        "TOO_LARGE",
        64 * MiB,
      ],
      [
        "a batch over 256 MiB as JSON",
        () =>
          store.append(
            key,
            Array.from({ length: 5 }, (_, n) => user(`u${n}`, { big: big.slice(0, 60 * MiB) })),
          ),
        "TOO_LARGE",
        256 * MiB,
      ],
    ];
    for (const [why, call, code, limit] of cases) {
      const error = await expectStowageError(call, code);
      expect(error.details?.limit, why).toBe(limit);
    }
    expect(await store.load(key)).toBeNull();
  });

  it("says PEER_MISSING when the Agent SDK cannot be resolved", async () => {
    await expectStowageError(
      () => assertAgentSdkInstalled("@anthropic-ai/no-such-sdk"),
      "UNAVAILABLE",
      "PEER_MISSING",
    );
  });

  it("four processes appending to one session on fs: every entry once, each writer's order kept", async () => {
    const root = await tempDirectory("stowage-session-store-procs-");
    const sessionId = randomUUID();
    const results = await Promise.all(
      [1, 2, 3, 4].map((worker) =>
        runChild(new URL("../children/session-store-append.ts", import.meta.url), [
          root,
          sessionId,
          String(worker),
          "12",
          "25",
          "5",
        ]),
      ),
    );
    for (const result of results) expect(result, result.stderr).toMatchObject({ code: 0 });
    const loaded = (await createObjectSessionStore({ store: createFsObjectStore({ root }) }).load({
      projectKey: "proj",
      sessionId,
    }))!;
    expect(loaded).toHaveLength(4 * 12 * 25);
    expect(new Set(loaded.map((e) => e.uuid)).size).toBe(loaded.length);
    for (const worker of [1, 2, 3, 4]) {
      const ns = loaded.filter((e) => e.worker === worker).map((e) => e.n as number);
      expect(ns).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    }
  });
});
