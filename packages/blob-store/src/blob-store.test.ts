import { createHash } from "node:crypto";
import { createMemoryObjectStore, type ObjectStore, StowageError } from "@stowage/core";
import { beforeEach, describe, expect, it } from "vitest";
import { HOSTILE_REFS } from "../test/hostile-refs.js";
import { type BlobStore, createBlobStore } from "./blob-store.js";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const bytesOf = (text: string) => new TextEncoder().encode(text);
const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "success",
    (err: unknown) => (StowageError.is(err) ? err.code : String(err)),
  );

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
      expect(await codeOf(blobs.get(stored.hash))).toBe("INTEGRITY");
      expect(await codeOf(blobs.verify(stored.hash))).toBe("INTEGRITY");
      expect(await codeOf(readAll((await blobs.stream(stored.hash))!))).toBe("INTEGRITY");
      expect(await codeOf(blobs.verify(sha256(bytesOf("never stored"))))).toBe("NOT_FOUND");
    });

    it("a put of the right bytes repairs a truncated copy", async () => {
      const bytes = bytesOf("complete content");
      const stored = await blobs.put(bytes);
      await counting.store.put(blobs.keyFor(stored.hash), bytes.slice(0, 4));
      expect((await blobs.put(bytes)).created).toBe(true);
      expect(await blobs.verify(stored.hash)).toEqual({ hash: stored.hash, size: bytes.byteLength });
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
            blobs.has,
            blobs.stat,
            blobs.delete,
            blobs.verify,
          ]) {
            expect(await codeOf(operation(id))).toBe("INVALID_INPUT");
          }
          expect(() => blobs.keyFor(id)).toThrow(StowageError);
          expect(await counting.allKeys()).toEqual([]);
        });
      }
      it("a body that is not bytes", async () => {
        expect(await codeOf(blobs.put("text" as unknown as Uint8Array))).toBe("INVALID_INPUT");
      });
    });

    it("passes an abort on to the store", async () => {
      const controller = new AbortController();
      controller.abort();
      expect(await codeOf(blobs.put(bytesOf("x"), { signal: controller.signal }))).toBe("ABORTED");
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
  ])("rejects %s", (_why, options) => {
    const full = { store: createMemoryObjectStore(), ...options };
    expect(() => createBlobStore(full as never)).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT" }) as unknown as Error,
    );
  });
});
