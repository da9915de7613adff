import { createMemoryObjectStore } from "@stowage/core";
import { expectStowageError, HOSTILE_PREFIXES } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { createObjectCheckpointSaver } from "../../src/langgraph/create-object-checkpoint-saver.js";
import { HOSTILE_IDS } from "../../src/testing/hostile-ids.js";

const THREAD = "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10";

// A checkpoint as LangGraph's own `emptyCheckpoint()` shapes one (format 4).
const checkpoint = (id: string) => ({
  v: 4,
  id,
  ts: "2026-11-29T00:00:00.000Z",
  channel_values: {},
  channel_versions: {},
  versions_seen: {},
});
const metadata = { source: "input" as const, step: -1, parents: {} };

const saver = () => createObjectCheckpointSaver({ store: createMemoryObjectStore() });

describe("a thread id is a Stowage session id", () => {
  for (const { value, why } of HOSTILE_IDS) {
    it(`put refuses ${why}`, async () => {
      const config = { configurable: { thread_id: value, checkpoint_ns: "" } };
      await expectStowageError(saver().put(config, checkpoint("c1"), metadata, {}), "INVALID_INPUT");
    });
    // getTuple reads a config without a thread as "no checkpoint", as LangGraph's savers do.
    if (value === undefined || value === null) continue;
    it(`getTuple and deleteThread refuse ${why}`, async () => {
      const s = saver();
      await expectStowageError(s.getTuple({ configurable: { thread_id: value } }), "INVALID_INPUT");
      await expectStowageError(s.deleteThread(value as string), "INVALID_INPUT");
    });
  }
});

describe("checkpoint ids, namespaces and writes", () => {
  const cases: [string, (s: ReturnType<typeof saver>) => Promise<unknown>][] = [
    [
      "an empty checkpoint id",
      (s) => s.put({ configurable: { thread_id: THREAD } }, checkpoint(""), metadata, {}),
    ],
    [
      "a checkpoint id over 120 bytes",
      (s) => s.put({ configurable: { thread_id: THREAD } }, checkpoint("c".repeat(121)), metadata, {}),
    ],
    [
      "a namespace that is not a string",
      (s) => s.put({ configurable: { thread_id: THREAD, checkpoint_ns: 7 } }, checkpoint("c1"), metadata, {}),
    ],
    [
      "a namespace over 4096 bytes",
      (s) =>
        s.put(
          { configurable: { thread_id: THREAD, checkpoint_ns: "é".repeat(2049) } },
          checkpoint("c1"),
          metadata,
          {},
        ),
    ],
    ["a put without configurable", (s) => s.put({}, checkpoint("c1"), metadata, {})],
    [
      "writes without a checkpoint id",
      (s) => s.putWrites({ configurable: { thread_id: THREAD } }, [], "task"),
    ],
    [
      "writes with an empty task id",
      (s) => s.putWrites({ configurable: { thread_id: THREAD, checkpoint_id: "c1" } }, [["a", 1]], ""),
    ],
    [
      "a write whose channel is not a string",
      (s) =>
        s.putWrites(
          { configurable: { thread_id: THREAD, checkpoint_id: "c1" } },
          [[7 as unknown as string, 1]],
          "t",
        ),
    ],
    [
      "a list limit that is negative",
      async (s) => {
        for await (const _ of s.list({ configurable: { thread_id: THREAD } }, { limit: -1 })) break;
      },
    ],
    [
      "a list before id over 120 bytes",
      async (s) => {
        const before = { configurable: { checkpoint_id: "c".repeat(121) } };
        for await (const _ of s.list({ configurable: { thread_id: THREAD } }, { before })) break;
      },
    ],
  ];
  for (const [why, act] of cases) {
    it(`refuses ${why} with INVALID_INPUT`, async () => {
      await expectStowageError(act(saver()), "INVALID_INPUT");
    });
  }
});

describe("createObjectCheckpointSaver", () => {
  for (const { value, why } of HOSTILE_PREFIXES) {
    it(`refuses the prefix ${why}`, async () => {
      await expectStowageError(
        () => createObjectCheckpointSaver({ store: createMemoryObjectStore(), prefix: value as string }),
        "INVALID_INPUT",
      );
    });
  }

  it("refuses a store that is not an ObjectStore", async () => {
    await expectStowageError(() => createObjectCheckpointSaver({ store: {} as never }), "INVALID_INPUT");
  });

  it("keeps every record below its prefix", async () => {
    const store = createMemoryObjectStore();
    const s = createObjectCheckpointSaver({ store, prefix: "tenants/u1/graphs/" });
    await s.put({ configurable: { thread_id: THREAD } }, checkpoint("c1"), metadata, {});
    const keys: string[] = [];
    for await (const item of store.iterate()) keys.push(item.key);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(key.startsWith(`tenants/u1/graphs/${THREAD}/`)).toBe(true);
  });
});
