import { createHash } from "node:crypto";
import { createMemoryObjectStore, type ObjectStore } from "@stowage/core";
import { expectStowageError, HOSTILE_REFS } from "@stowage/core/testing";
import { beforeEach, describe, expect, it } from "vitest";
import { type BlobStore, createBlobStore } from "../src/blob-store.js";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const bytesOf = (text: string) => new TextEncoder().encode(text);

function chunked(bytes: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + size));
      offset += size;
    },
  });
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return new Uint8Array(Buffer.concat(chunks));
}

/** The memory store, counting writes so tests can prove that nothing was rewritten. */
function countingStore(): { store: ObjectStore; puts: () => number; allKeys: () => Promise<string[]> } {
  const inner = createMemoryObjectStore();
  let puts = 0;
  const store: ObjectStore = {
    ...inner,
    put: (key, body, options) => {
      puts++;
      return inner.put(key, body, options);
    },
  };
  const allKeys = async () => {
    const keys: string[] = [];
    for await (const item of inner.iterate()) keys.push(item.key);
    return keys;
  };
  return { store, puts: () => puts, allKeys };
}

for (const layout of ["flat", "sharded"] as const) {
  describe(`blob store (${layout} layout)`, () => {
    let counting: ReturnType<typeof countingStore>;
    let blobs: BlobStore;

    beforeEach(() => {
      counting = countingStore();
      blobs = createBlobStore({ store: counting.store, layout, prefix: "blobs/" });
    });

    it("stores bytes under their SHA-256 and returns the ref", async () => {
      const bytes = bytesOf("a screenshot");
      const hash = sha256(bytes);
      const result = await blobs.put(bytes);
      expect(result).toEqual({ hash, ref: `blob:sha256:${hash}`, size: bytes.byteLength, created: true });
      const key = layout === "flat" ? `blobs/${hash}` : `blobs/${hash.slice(0, 2)}/${hash}`;
      expect(blobs.keyFor(hash)).toBe(key);
      expect(await counting.allKeys()).toEqual([key]);
      expect(await blobs.get(result.ref)).toEqual(bytes);
    });

    it("is idempotent: the same bytes are never written twice", async () => {
      const bytes = bytesOf("same content");
      const first = await blobs.put(bytes);
      const second = await blobs.put(bytes.slice());
      const streamed = await blobs.put(chunked(bytes, 3));
      expect(second).toEqual({ ...first, created: false });
      expect(streamed).toEqual({ ...first, created: false });
      expect(counting.puts()).toBe(2); // the first put, and the staging copy of the stream
      expect(await counting.allKeys()).toEqual([blobs.keyFor(first.hash)]);
    });

    it("hashes a stream while storing it and leaves no staging object", async () => {
      const bytes = new Uint8Array(300_000).map((_, i) => (i * 7) % 256);
      const result = await blobs.put(chunked(bytes, 4096));
      expect(result).toEqual({
        hash: sha256(bytes),
        ref: `blob:sha256:${sha256(bytes)}`,
        size: 300_000,
        created: true,
      });
      expect(await counting.allKeys()).toEqual([blobs.keyFor(result.hash)]);
      expect(await readAll((await blobs.stream(result.hash))!)).toEqual(bytes);
    });

    it("a failing stream stores nothing", async () => {
      const failing = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytesOf("partial"));
          controller.error(new Error("network down"));
        },
      });
      await expect(blobs.put(failing)).rejects.toThrow();
      expect(await counting.allKeys()).toEqual([]);
    });

    it("answers has, stat, list, iterate and delete", async () => {
      const a = await blobs.put(bytesOf("a"));
      const b = await blobs.put(bytesOf("bb"));
      expect(await blobs.has(a.hash)).toBe(true);
      expect(await blobs.stat(b.ref)).toMatchObject({ hash: b.hash, ref: b.ref, size: 2 });
      const listed = (await blobs.list()).items.map((item) => item.hash);
      expect(listed.sort()).toEqual([a.hash, b.hash].sort());
      const iterated: string[] = [];
      for await (const item of blobs.iterate()) iterated.push(item.hash);
      expect(iterated.sort()).toEqual(listed);
      await blobs.delete(a.ref);
      expect(await blobs.has(a.hash)).toBe(false);
      expect(await blobs.get(a.hash)).toBeNull();
      expect(await blobs.stream(a.hash)).toBeNull();
      expect(await blobs.stat(a.hash)).toBeNull();
    });

    it("lists only keys of its own layout under its prefix", async () => {
      const stored = await blobs.put(bytesOf("mine"));
      const hash = sha256(bytesOf("x"));
      for (const key of [
        "README",
        "blobs/notes.txt",
        "blobs/.staging/abc",
        `blobs/zz/${hash}`,
        `other/${hash}`,
      ]) {
        await counting.store.put(key, bytesOf("foreign"));
      }
      const listed = (await blobs.list()).items.map((item) => item.hash);
      expect(listed).toEqual([stored.hash]);
    });

    it("detects corruption on get, stream and verify", async () => {
      const stored = await blobs.put(bytesOf("original bytes"));
      expect(await blobs.verify(stored.hash)).toEqual({ hash: stored.hash, size: 14 });
      await counting.store.put(blobs.keyFor(stored.hash), bytesOf("tampered bytes"));
      await expectStowageError(blobs.get(stored.hash), "INTEGRITY");
      await expectStowageError(blobs.verify(stored.hash), "INTEGRITY");
      await expectStowageError(readAll((await blobs.stream(stored.hash))!), "INTEGRITY");
      await expectStowageError(blobs.verify(sha256(bytesOf("never stored"))), "NOT_FOUND");
    });

    it("a put of the right bytes repairs a truncated copy", async () => {
      const bytes = bytesOf("complete content");
      const stored = await blobs.put(bytes);
      await counting.store.put(blobs.keyFor(stored.hash), bytes.slice(0, 4));
      expect((await blobs.put(bytes)).created).toBe(true);
      expect(await blobs.verify(stored.hash)).toEqual({ hash: stored.hash, size: bytes.byteLength });
    });

    it("a put of the right bytes repairs a same-size corrupted copy", async () => {
      const bytes = bytesOf("complete content");
      const stored = await blobs.put(bytes);
      await counting.store.put(blobs.keyFor(stored.hash), bytesOf("CORRUPTED conten"));
      await expectStowageError(blobs.get(stored.hash), "INTEGRITY");
      expect((await blobs.put(bytes)).created).toBe(true);
      expect(await blobs.get(stored.hash)).toEqual(bytes);
    });

    it("a streamed put repairs a same-size corrupted copy", async () => {
      const bytes = bytesOf("complete content");
      const stored = await blobs.put(bytes);
      await counting.store.put(blobs.keyFor(stored.hash), bytesOf("CORRUPTED conten"));
      expect((await blobs.put(chunked(bytes, 5))).created).toBe(false);
      expect(await blobs.get(stored.hash)).toEqual(bytes);
    });

    it("streamVerified hands over no byte of a corrupted blob, and all of a good one", async () => {
      const stored = await blobs.put(bytesOf("original bytes"));
      expect(await readAll((await blobs.streamVerified(stored.ref))!)).toEqual(bytesOf("original bytes"));
      expect(await blobs.streamVerified(sha256(bytesOf("never stored")))).toBeNull();
      await counting.store.put(blobs.keyFor(stored.hash), bytesOf("tampered bytes"));
      await expectStowageError(blobs.streamVerified(stored.hash), "INTEGRITY");
      // A plain stream hands the bytes over first and errors only at its end.
      const reader = (await blobs.stream(stored.hash))!.getReader();
      expect((await reader.read()).value).toEqual(bytesOf("tampered bytes"));
      await expectStowageError(reader.read(), "INTEGRITY");
    });

    it("streamVerified verifies even with verifyReads off", async () => {
      const raw = createBlobStore({ store: counting.store, layout, prefix: "blobs/", verifyReads: false });
      const stored = await raw.put(bytesOf("abc"));
      await counting.store.put(raw.keyFor(stored.hash), bytesOf("xyz"));
      await expectStowageError(raw.streamVerified(stored.hash), "INTEGRITY");
    });

    it("with verifyReads off, returns stored bytes without re-hashing", async () => {
      const raw = createBlobStore({ store: counting.store, layout, prefix: "blobs/", verifyReads: false });
      const stored = await raw.put(bytesOf("abc"));
      await counting.store.put(raw.keyFor(stored.hash), bytesOf("xyz"));
      expect(await raw.get(stored.hash)).toEqual(bytesOf("xyz"));
    });

    describe("hostile hashes and refs are rejected before the store is touched", () => {
      for (const [why, value] of HOSTILE_REFS) {
        it(why, async () => {
          const id = value as string;
          for (const operation of [
            blobs.get,
            blobs.stream,
            blobs.streamVerified,
            blobs.has,
            blobs.stat,
            blobs.delete,
            blobs.verify,
          ]) {
            await expectStowageError(operation(id), "INVALID_INPUT");
          }
          await expectStowageError(() => blobs.keyFor(id), "INVALID_INPUT");
          await expectStowageError(() => blobs.uriFor(id), "INVALID_INPUT");
          expect(await counting.allKeys()).toEqual([]);
        });
      }
      it("a body that is not bytes", async () => {
        await expectStowageError(blobs.put("text" as unknown as Uint8Array), "INVALID_INPUT");
      });
    });

    it("passes an abort on to the store", async () => {
      const controller = new AbortController();
      controller.abort();
      await expectStowageError(blobs.put(bytesOf("x"), { signal: controller.signal }), "ABORTED");
      expect(await counting.allKeys()).toEqual([]);
    });
  });
}

describe("createBlobStore options", () => {
  it.each([
    ["no store", { store: undefined }],
    ["not a store", { store: {} }],
    ["bad layout", { layout: "nested" }],
    ["traversal prefix", { prefix: "../blobs/" }],
    ["prefix without trailing slash", { prefix: "blobs" }],
    ["absolute prefix", { prefix: "/blobs/" }],
  ])("rejects %s", async (_why, options) => {
    const full = { store: createMemoryObjectStore(), ...options };
    await expectStowageError(() => createBlobStore(full as never), "INVALID_INPUT");
  });
});

describe("blob URIs", () => {
  it("are undefined over a store whose objects have no address (memory)", async () => {
    const blobs = createBlobStore({ store: createMemoryObjectStore() });
    const { hash, ref } = await blobs.put(bytesOf("no address"));
    expect(blobs.uriFor(hash)).toBeUndefined();
    expect(blobs.uriFor(ref)).toBeUndefined();
  });

  it("are the ObjectStore's URI of the blob's key, by hash or by ref", async () => {
    // Stands in for a store with addresses; the real file-system store (file://) is checked in
    // hot-state's registry tests: storage-fs tests with blob-store, so blob-store cannot test with it.
    const inner = createMemoryObjectStore();
    const store: ObjectStore = { ...inner, uriFor: (key) => `s3://bucket/${key}` };
    const blobs = createBlobStore({ store, layout: "sharded", prefix: "blobs/" });
    const { hash, ref } = await blobs.put(bytesOf("addressed"));
    const uri = `s3://bucket/blobs/${hash.slice(0, 2)}/${hash}`;
    expect(blobs.uriFor(hash)).toBe(uri);
    expect(blobs.uriFor(ref)).toBe(uri);
  });
});
