import { concatBytes, StowageError } from "@stowage/core";

/** Reads exact byte counts from a stream of chunks of any size. */
export class ChunkReader {
  readonly #source: AsyncIterator<Uint8Array>;
  #pending: Uint8Array = new Uint8Array(0);
  #done = false;

  constructor(source: AsyncIterable<Uint8Array>) {
    this.#source = source[Symbol.asyncIterator]();
  }

  async #fill(): Promise<boolean> {
    while (this.#pending.byteLength === 0 && !this.#done) {
      const next = await this.#source.next();
      if (next.done) this.#done = true;
      else this.#pending = next.value;
    }
    return this.#pending.byteLength > 0;
  }

  #truncated(what: string): StowageError {
    return new StowageError("INTEGRITY", `session archive is truncated: it ends inside ${what}`, {
      reason: "TRUNCATED_ARCHIVE",
    });
  }

  /** Exactly `length` bytes; INTEGRITY when the stream ends first. */
  async readExactly(length: number, what: string): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    for await (const part of this.readRange(length, what)) parts.push(part);
    return concatBytes(parts, length);
  }

  /** The next `length` bytes as they arrive (views, valid until the next read). */
  async *readRange(length: number, what: string): AsyncGenerator<Uint8Array> {
    let left = length;
    while (left > 0) {
      if (!(await this.#fill())) throw this.#truncated(what);
      const take = Math.min(left, this.#pending.byteLength);
      const part = this.#pending.subarray(0, take);
      this.#pending = this.#pending.subarray(take);
      left -= take;
      yield part;
    }
  }

  /** Every byte left, as it arrives. */
  async *readRest(): AsyncGenerator<Uint8Array> {
    while (await this.#fill()) {
      const part = this.#pending;
      this.#pending = new Uint8Array(0);
      yield part;
    }
  }

  /** Up to `length` next bytes (fewer only when the stream ends first), without consuming them. */
  async peek(length: number): Promise<Uint8Array> {
    while (this.#pending.byteLength < length && !this.#done) {
      const next = await this.#source.next();
      if (next.done) this.#done = true;
      else
        this.#pending = concatBytes(
          [this.#pending, next.value],
          this.#pending.byteLength + next.value.byteLength,
        );
    }
    return this.#pending.subarray(0, Math.min(length, this.#pending.byteLength));
  }

  /** True when no byte is left. */
  async atEnd(): Promise<boolean> {
    return !(await this.#fill());
  }

  /** Lets the source clean up (closes a decompressor that is still running). */
  async close(): Promise<void> {
    await this.#source.return?.();
  }
}
