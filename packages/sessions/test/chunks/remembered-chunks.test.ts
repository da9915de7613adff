import { describe, expect, it } from "vitest";
import { compressChunk, decompressChunk } from "../../src/chunks/chunk-codec.js";
import { chunkMemoryOf, createChunkMemory } from "../../src/chunks/remembered-chunks.js";

const text = (line: string, times: number) => new TextEncoder().encode(`${line}\n`.repeat(times));

/** A compressor that counts its calls and "compresses" to a fixed size per chunk. */
function countingCompressor(size: number) {
  const seen: string[] = [];
  return {
    seen,
    compress: async (raw: Uint8Array) => {
      seen.push(new TextDecoder().decode(raw));
      return new Uint8Array(size).fill(raw[0] ?? 0);
    },
  };
}

describe("chunk memory (what lets a follow-up capture compress only its new chunks)", () => {
  it("gives back the bytes compressing would, and compresses each distinct chunk once", async () => {
    const memory = createChunkMemory(1024 * 1024);
    const raw = text('{"type":"user","message":{"role":"user","content":"hello"}}', 200);
    const first = await memory.compress(raw);
    // The same text in another array (the next capture read the file again).
    const again = await memory.compress(new Uint8Array(raw));
    expect(again).toBe(first);
    expect(Buffer.from(first).equals(Buffer.from(await compressChunk(raw)))).toBe(true);
    expect(await decompressChunk(again, raw.byteLength, "blob:sha256:test")).toEqual(raw);
    expect(memory.bytes).toBe(first.byteLength);
  });

  it("holds at most its limit, the least recently used chunk out first", async () => {
    const counting = countingCompressor(40);
    const memory = createChunkMemory(100, counting.compress);
    const [a, b, c] = ["a", "b", "c"].map((line) => text(line, 1));
    await memory.compress(a!);
    await memory.compress(b!);
    await memory.compress(a!); // a is now the most recently used
    await memory.compress(c!); // 120 bytes: b goes
    expect(memory.bytes).toBe(80);
    await memory.compress(a!);
    await memory.compress(b!);
    expect(counting.seen).toEqual(["a\n", "b\n", "c\n", "b\n"]);
  });

  it("keeps nothing larger than its limit, and counts a chunk compressed twice at once once", async () => {
    const small = createChunkMemory(10, countingCompressor(40).compress);
    await small.compress(text("x", 1));
    expect(small.bytes).toBe(0);
    const counting = countingCompressor(40);
    const memory = createChunkMemory(1000, counting.compress);
    await Promise.all([memory.compress(text("y", 1)), memory.compress(text("y", 1))]);
    expect(counting.seen).toEqual(["y\n", "y\n"]);
    expect(memory.bytes).toBe(40);
  });

  it("is one memory per content store: another principal's view starts empty", () => {
    const alice = {};
    const bob = {};
    expect(chunkMemoryOf(alice)).toBe(chunkMemoryOf(alice));
    expect(chunkMemoryOf(bob)).not.toBe(chunkMemoryOf(alice));
  });
});
