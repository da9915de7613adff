import { createMemoryObjectStore } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { createObjectCheckpointSaver } from "../../src/langgraph/create-object-checkpoint-saver.js";

const THREAD_A = "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10";
const THREAD_B = "7d1e2f90-4c3b-4a5d-8e6f-1a2b3c4d5e6f";
const checkpoint = {
  v: 4,
  id: "1f0a0000-0000-6000-8000-000000000001",
  ts: "2026-11-29T00:00:00.000Z",
  channel_values: { messages: ["hi"] },
  channel_versions: { messages: 1 },
  versions_seen: {},
};
const metadata = { source: "input" as const, step: -1, parents: {} };

async function savedCheckpoint() {
  const store = createMemoryObjectStore();
  const saver = createObjectCheckpointSaver({ store });
  const saved = await saver.put({ configurable: { thread_id: THREAD_A } }, checkpoint, metadata, {
    messages: 1,
  });
  const keys: string[] = [];
  for await (const item of store.iterate({ prefix: `langgraph/${THREAD_A}/c/` })) keys.push(item.key);
  return { store, saver, saved, checkpointKey: keys[0]! };
}

describe("a stored record that is not what the saver wrote", () => {
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  const encode = (value: string) => new TextEncoder().encode(value);
  // Each turns the record the saver wrote into a broken one.
  const corruptions: [string, (record: Uint8Array) => Uint8Array][] = [
    ["no header line", (record) => encode(text(record).replace("\n", " "))],
    ["a header that is not JSON", (record) => encode(`not json${text(record)}`)],
    ["a header without sizes", (record) => encode(text(record).replace('"sizes":', '"sized":'))],
    ["parts shorter than the header says", (record) => record.subarray(0, record.length - 5)],
    ["more bytes than the header says", (record) => encode(`${text(record)}extra`)],
    ["a negative size", (record) => encode(text(record).replace(/"sizes":\[\d+/, '"sizes":[-1'))],
  ];
  for (const [why, corrupt] of corruptions) {
    it(`is INTEGRITY / CORRUPT_RECORD with ${why}`, async () => {
      const { store, saver, saved, checkpointKey } = await savedCheckpoint();
      await store.put(checkpointKey, corrupt((await store.get(checkpointKey))!));
      await expectStowageError(saver.getTuple(saved), "INTEGRITY", "CORRUPT_RECORD");
    });
  }

  it("is INTEGRITY / FOREIGN_RECORD when copied from another thread", async () => {
    const { store, saver, checkpointKey } = await savedCheckpoint();
    const copied = checkpointKey.replace(THREAD_A, THREAD_B);
    await store.put(copied, (await store.get(checkpointKey))!);
    await expectStowageError(
      saver.getTuple({ configurable: { thread_id: THREAD_B } }),
      "INTEGRITY",
      "FOREIGN_RECORD",
    );
  });

  it("leaves other threads readable after deleteThread", async () => {
    const { saver, saved } = await savedCheckpoint();
    await saver.put({ configurable: { thread_id: THREAD_B } }, checkpoint, metadata, { messages: 1 });
    await saver.deleteThread(THREAD_A);
    expect(await saver.getTuple(saved)).toBeUndefined();
    expect(
      (await saver.getTuple({ configurable: { thread_id: THREAD_B } }))?.checkpoint.channel_values,
    ).toEqual({
      messages: ["hi"],
    });
  });
});
