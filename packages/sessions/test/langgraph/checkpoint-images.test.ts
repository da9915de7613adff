import { createHash } from "node:crypto";
import { HumanMessage } from "@langchain/core/messages";
import { createBlobStore } from "@stowage/blob-store";
import { createMemoryObjectStore, type ObjectStore } from "@stowage/core";
import { encodePng } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { createObjectCheckpointSaver } from "../../src/langgraph/create-object-checkpoint-saver.js";

const THREAD = "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10";
const config = { configurable: { thread_id: THREAD, checkpoint_ns: "" } };
const metadata = { source: "loop" as const, step: 0, parents: {} };

// A real PNG of noise (it does not compress), as a chat model receives it.
const png = encodePng(64, 64, (x, y) => [(x * 73 + y * 151) % 256, (x * y * 31) % 256, (x + y * 7) % 256]);
const base64 = png.toString("base64");
const sha256 = createHash("sha256").update(png).digest("hex");

// LangChain's message with an image as a data URL, and an Anthropic-style image block.
const messages = [
  new HumanMessage({
    content: [
      { type: "text", text: "what is in this picture?" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${base64}` } },
    ],
  }),
];
const toolResult = {
  role: "tool",
  content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: base64 } }],
};

const checkpoint = {
  v: 4,
  id: "1f0a0000-0000-6000-8000-000000000001",
  ts: "2026-11-29T00:00:00.000Z",
  channel_values: { messages, toolResult },
  channel_versions: { messages: 1, toolResult: 1 },
  versions_seen: {},
};

async function storedBytes(store: ObjectStore): Promise<number> {
  let total = 0;
  for await (const item of store.iterate({ prefix: `langgraph/${THREAD}/` })) total += item.size;
  return total;
}

describe("images in channel values go to the blob store", () => {
  it("stores each image once and reads every value back identical", async () => {
    const objects = createMemoryObjectStore();
    const blobStore = createMemoryObjectStore();
    const blobs = createBlobStore({ store: blobStore });
    const saver = createObjectCheckpointSaver({ store: objects, blobs });
    const saved = await saver.put(config, checkpoint, metadata, checkpoint.channel_versions);

    const tuple = await saver.getTuple(saved);
    if (!tuple) throw new Error("the checkpoint just saved is not read back");
    const [message] = tuple.checkpoint.channel_values.messages as HumanMessage[];
    expect(message).toBeInstanceOf(HumanMessage);
    expect(message?.content).toEqual(messages[0]!.content);
    expect(tuple.checkpoint.channel_values.toolResult).toEqual(toolResult);

    expect(await blobs.get(sha256)).toEqual(new Uint8Array(png));
    let blobCount = 0;
    for await (const _ of blobStore.iterate()) blobCount++;
    expect(blobCount).toBe(1);
    expect(await storedBytes(objects)).toBeLessThan(base64.length);
  });

  it("keeps a value whose base64 is not an image as it was", async () => {
    const saver = createObjectCheckpointSaver({
      store: createMemoryObjectStore(),
      blobs: createBlobStore({ store: createMemoryObjectStore() }),
    });
    const text = { note: "A".repeat(4096) };
    const values = { ...checkpoint, channel_values: { text }, channel_versions: { text: 1 } };
    const saved = await saver.put(config, values, metadata, { text: 1 });
    expect((await saver.getTuple(saved))?.checkpoint.channel_values).toEqual({ text });
  });
});
