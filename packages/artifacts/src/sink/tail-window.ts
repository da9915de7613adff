import { concatBytes } from "@stowage/core";

const decoder = new TextDecoder("utf-8");

/** Chunks up to this many times the capacity are kept by reference; bigger ones are cut to a copy. */
const MAX_REFERENCED_CHUNK_FACTOR = 4;

/**
 * The last `capacity` bytes of a stream. Chunks are kept by reference (no copy per push), and
 * dropped from the front once the rest covers the capacity; a chunk over
 * {@link MAX_REFERENCED_CHUNK_FACTOR} times the capacity is replaced by a copy of its tail, so a
 * huge chunk is never retained. Memory stays under five times the capacity.
 */
export class TailWindow {
  readonly capacity: number;
  #chunks: Uint8Array[] = [];
  #first = 0;
  #bytes = 0;
  #cut = false;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  /** Bytes held; at least `min(capacity, bytes pushed)`. */
  get bytes(): number {
    return this.#bytes;
  }

  append(chunk: Uint8Array): void {
    if (chunk.byteLength > MAX_REFERENCED_CHUNK_FACTOR * this.capacity) {
      this.#cut = true;
      this.#chunks = [chunk.slice(chunk.byteLength - this.capacity)];
      this.#first = 0;
      this.#bytes = this.capacity;
      return;
    }
    this.#chunks.push(chunk);
    this.#bytes += chunk.byteLength;
    // Drop whole chunks from the front while what remains still covers the capacity.
    while (this.#bytes - this.#chunks[this.#first]!.byteLength >= this.capacity) {
      this.#bytes -= this.#chunks[this.#first]!.byteLength;
      this.#first++;
      this.#cut = true;
    }
    if (this.#first > 64) {
      this.#chunks = this.#chunks.slice(this.#first);
      this.#first = 0;
    }
  }

  /** The chunks held, oldest first (they may begin before the window: see {@link bytes}). */
  chunks(): Uint8Array[] {
    return this.#chunks.slice(this.#first);
  }

  /** The last `capacity` bytes (or all, when fewer were pushed), as text starting at a UTF-8 character boundary. */
  text(): string {
    const all = concatBytes(this.chunks(), this.#bytes);
    let start = Math.max(0, all.byteLength - this.capacity);
    if (this.#cut || start > 0) {
      // Skip the continuation bytes (10xxxxxx) of a character cut by the window's start.
      const limit = Math.min(start + 3, all.byteLength);
      while (start < limit && (all[start]! & 0xc0) === 0x80) start++;
    }
    return decoder.decode(all.subarray(start));
  }
}
