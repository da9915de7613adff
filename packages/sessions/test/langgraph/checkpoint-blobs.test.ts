import { createHash } from "node:crypto";
import { createBlobStore } from "@stowage/blob-store";
import { createMemoryObjectStore, type ObjectStore } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { createObjectCheckpointSaver } from "../../src/langgraph/create-object-checkpoint-saver.js";

const THREAD = "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10";
const config = { configurable: { thread_id: THREAD, checkpoint_ns: "" } };
const metadata = { source: "loop" as const, step: 0, parents: {} };

const bytes = (length: number, seed: number) => Uint8Array.from({ length }, (_, i) => (i * 31 + seed) % 256);
const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

const photo = bytes(4096, 1);
const attachment = bytes(2048, 2);
const small = bytes(100, 3);

// Channel values a graph keeps: a whole binary value, binary inside a message, and a small one.
const checkpoint = {
  v: 4,
  id: "1f0a0000-0000-6000-8000-000000000001",
  ts: "2026-11-29T00:00:00.000Z",
  channel_values: { photo, message: { role: "user", files: [{ name: "a.pdf", data: attachment }] }, small },
  channel_versions: { photo: 1, message: 1, small: 1 },
  versions_seen: {},
};

async function storedBytes(store: ObjectStore, prefix: string): Promise<number> {
  let total = 0;
  for await (const item of store.iterate({ prefix })) total += item.size;
  return total;
}

async function savedWithBlobs() {
  const objects = createMemoryObjectStore();
  const blobs = createBlobStore({ store: createMemoryObjectStore() });
  const saver = createObjectCheckpointSaver({ store: objects, blobs });
  const saved = await saver.put(config, checkpoint, metadata, checkpoint.channel_versions);
  return { objects, blobs, saver, saved };
}

describe("binary in channel values and writes goes to the blob store", () => {
  it("reads every value back identical, the large binary from the blob store", async () => {
    const { objects, blobs, saver, saved } = await savedWithBlobs();
    const tuple = await saver.getTuple(saved);
    expect(tuple?.checkpoint.channel_values).toEqual(checkpoint.channel_values);
    expect(tuple?.checkpoint.channel_values.photo).toBeInstanceOf(Uint8Array);
    expect(await blobs.get(sha256(photo))).toEqual(photo);
    expect(await blobs.get(sha256(attachment))).toEqual(attachment);
    expect(await blobs.get(sha256(small))).toBeNull();
    // Neither large value is in the checkpoint's own records.
    expect(await storedBytes(objects, `langgraph/${THREAD}/`)).toBeLessThan(photo.length);
  });

  it("moves a pending write's binary and reads it back", async () => {
    const { blobs, saver, saved } = await savedWithBlobs();
    const upload = bytes(3000, 4);
    await saver.putWrites(saved, [["photo", upload]], "task-1");
    const tuple = await saver.getTuple(saved);
    expect(tuple?.pendingWrites).toEqual([["task-1", "photo", upload]]);
    expect(await blobs.get(sha256(upload))).toEqual(upload);
  });

  it("keeps every value whole without a blob store", async () => {
    const objects = createMemoryObjectStore();
    const saver = createObjectCheckpointSaver({ store: objects });
    const saved = await saver.put(config, checkpoint, metadata, checkpoint.channel_versions);
    expect((await saver.getTuple(saved))?.checkpoint.channel_values).toEqual(checkpoint.channel_values);
    expect(await storedBytes(objects, `langgraph/${THREAD}/`)).toBeGreaterThan(photo.length);
  });

  it("says a blob is missing rather than give a value without its bytes", async () => {
    const { objects, blobs, saved } = await savedWithBlobs();
    const forgetful = { put: blobs.put.bind(blobs), get: async () => null };
    const reader = createObjectCheckpointSaver({ store: objects, blobs: forgetful });
    await expectStowageError(reader.getTuple(saved), "INTEGRITY", "MISSING_BLOB");
  });

  it("asks for the blob store when a value needs it", async () => {
    const { objects, saved } = await savedWithBlobs();
    const reader = createObjectCheckpointSaver({ store: objects });
    await expectStowageError(reader.getTuple(saved), "UNAVAILABLE", "NO_BLOB_STORE");
  });
});
