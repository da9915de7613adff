import { concatBytes } from "@stowage/core";
import {
  type ControlSequenceState,
  endOfOpenControlSequence,
  OUTSIDE_CONTROL_SEQUENCE,
  scanControlSequences,
} from "./control-sequence-scanner.js";

const decoder = new TextDecoder("utf-8");

/** The first character boundary at or after `at`: continuation bytes (10xxxxxx) are skipped. */
function characterStart(bytes: Uint8Array, at: number): number {
  let start = at;
  const limit = Math.min(start + 3, bytes.byteLength);
  while (start < limit && (bytes[start]! & 0xc0) === 0x80) start++;
  return start;
}

/** Chunks up to this many times the capacity are kept by reference; bigger ones are cut to a copy. */
const MAX_REFERENCED_CHUNK_FACTOR = 4;

/**
 * The last `capacity` bytes of a stream. Chunks are kept by reference (no copy per push), and
 * dropped from the front once the rest covers the capacity; a chunk over
 * {@link MAX_REFERENCED_CHUNK_FACTOR} times the capacity is replaced by a copy of its tail, so a
 * huge chunk is never retained. Memory stays under five times the capacity.
 *
 * Every byte that leaves the window is read once in the escape-sequence grammar of core's
 * `sanitizeText`, so the window knows whether it starts inside a sequence, however long ago the
 * sequence began (an inline image's OSC can be megabytes long): its text never starts with the
 * rest of a sequence's payload.
 */
export class TailWindow {
  readonly capacity: number;
  #chunks: Uint8Array[] = [];
  #first = 0;
  #bytes = 0;
  #cut = false;
  /** Where the first chunk held starts in the escape-sequence grammar. */
  #stateAtFirst: ControlSequenceState = OUTSIDE_CONTROL_SEQUENCE;

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
      for (const held of this.chunks()) this.#stateAtFirst = scanControlSequences(held, this.#stateAtFirst);
      const keep = chunk.byteLength - this.capacity;
      this.#stateAtFirst = scanControlSequences(chunk, this.#stateAtFirst, 0, keep);
      this.#chunks = [chunk.slice(keep)];
      this.#first = 0;
      this.#bytes = this.capacity;
      return;
    }
    this.#chunks.push(chunk);
    this.#bytes += chunk.byteLength;
    // Drop whole chunks from the front while what remains still covers the capacity.
    while (this.#bytes - this.#chunks[this.#first]!.byteLength >= this.capacity) {
      const dropped = this.#chunks[this.#first]!;
      this.#stateAtFirst = scanControlSequences(dropped, this.#stateAtFirst);
      this.#bytes -= dropped.byteLength;
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

  /**
   * The last `capacity` bytes (or all, when fewer were pushed), as text starting at a UTF-8
   * character boundary and after any escape sequence the window's start cut through (so no
   * `[1;31m` fragment or OSC payload leads the text).
   */
  text(): string {
    const all = concatBytes(this.chunks(), this.#bytes);
    const start = Math.max(0, all.byteLength - this.capacity);
    if (!this.#cut && start === 0) return decoder.decode(all);
    const state = scanControlSequences(all, this.#stateAtFirst, 0, start);
    return decoder.decode(all.subarray(characterStart(all, endOfOpenControlSequence(all, state, start))));
  }
}
