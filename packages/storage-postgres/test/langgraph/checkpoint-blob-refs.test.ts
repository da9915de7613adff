import { createHash, randomBytes } from "node:crypto";
import { expectStowageError } from "@stowage/core/testing";
import { encodePng } from "@stowage/test-support";
import { expect, it } from "vitest";
import { scanCheckpointTablesForBlobRefs } from "../../src/langgraph/checkpoint-blob-refs.js";
import { createPostgresCheckpointSaver } from "../../src/langgraph/checkpoint-saver.js";
import { describeBackends } from "../backends.js";
import { memoryContentStore } from "../sessions/memory-content-store.js";

// A real PNG of noise, as an Anthropic-style image block of a tool result; and a pending write
// holding a second one: both must be garbage-collection roots while their rows exist.
const pngOf = (seed: number) =>
  encodePng(48, 48, (x, y) => [(x * seed + y * 151) % 256, (x * y * 31) % 256, seed]);
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const imageBlock = (png: Uint8Array) => ({
  type: "image",
  source: { type: "base64", media_type: "image/png", data: Buffer.from(png).toString("base64") },
});

async function collect(refs: AsyncIterable<string>): Promise<string[]> {
  const all: string[] = [];
  for await (const hash of refs) all.push(hash);
  return all.sort();
}

describeBackends("the LangGraph tables as a root source", (backend) => {
  it("yields the hash of every image a checkpoint's values and pending writes moved to the blobs", async () => {
    const { db } = backend.connection();
    const blobs = memoryContentStore();
    const saver = createPostgresCheckpointSaver({
      db,
      blobs,
      namespace: `roots-${randomBytes(4).toString("hex")}`,
    });
    const [first, second] = [pngOf(7), pngOf(11)];
    const config = { configurable: { thread_id: "thread-1", checkpoint_ns: "" } };
    const checkpoint = {
      v: 4,
      id: "1f0a0000-0000-6000-8000-000000000001",
      ts: "2026-11-29T00:00:00.000Z",
      channel_values: { toolResult: { role: "tool", content: [imageBlock(first)] } },
      channel_versions: { toolResult: 1 },
      versions_seen: {},
    };
    const saved = await saver.put(
      config,
      checkpoint,
      { source: "loop", step: 0, parents: {} },
      { toolResult: 1 },
    );
    await saver.putWrites(saved, [["toolResult", { role: "tool", content: [imageBlock(second)] }]], "task-1");

    // By hand: the SHA-256 of each PNG's bytes, which is what the blob store was given.
    const found = await collect(scanCheckpointTablesForBlobRefs(db));
    expect(found).toEqual(expect.arrayContaining([sha256(first), sha256(second)].sort()));
    expect([...blobs.blobs.keys()].sort()).toEqual([sha256(first), sha256(second)].sort());

    await saver.deleteThread("thread-1");
    const after = await collect(scanCheckpointTablesForBlobRefs(db));
    expect(after).not.toContain(sha256(first));
    expect(after).not.toContain(sha256(second));
  });

  it("refuses what is not a database, and stops on an aborted signal", async () => {
    await expectStowageError(collect(scanCheckpointTablesForBlobRefs({} as never)), "INVALID_INPUT");
    const aborted = AbortSignal.abort();
    await expectStowageError(
      collect(scanCheckpointTablesForBlobRefs(backend.connection().db, { signal: aborted })),
      "ABORTED",
    );
  });
});
