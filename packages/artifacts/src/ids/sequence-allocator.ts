import { StowageError, throwIfAborted } from "@stowage/core";
import { MAX_ARTIFACT_ID } from "../layout/names.js";
import type { ClaimRegistry } from "./claims.js";

/**
 * Failed claims in a row after which an allocator rescans the directory instead of trying the
 * next number: another process that allocated many ids since our last scan is skipped in one
 * step rather than one claim at a time.
 */
const RESCAN_AFTER_CONFLICTS = 8;

export interface SequenceSource {
  /** What the numbers are, for messages (`artifact id`). */
  what: string;
  /** The claim file name of `n`. */
  claimName(n: number): string;
  /** The highest number in use (files and claims), or -1. */
  highestInUse(): Promise<number>;
}

/**
 * Hands out increasing numbers that are unique across processes: the in-memory counter is only
 * a hint of where to start; a number is ours once its claim was created exclusively.
 */
export class SequenceAllocator {
  readonly #claims: ClaimRegistry;
  readonly #source: SequenceSource;
  #next: number | undefined;
  #scan: Promise<void> | undefined;

  constructor(claims: ClaimRegistry, source: SequenceSource) {
    this.#claims = claims;
    this.#source = source;
  }

  async #rescan(): Promise<void> {
    const highest = await this.#source.highestInUse();
    this.#next = Math.max(this.#next ?? 0, highest + 1);
  }

  async allocate(signal?: AbortSignal): Promise<number> {
    if (this.#next === undefined) {
      this.#scan ??= this.#rescan().finally(() => {
        this.#scan = undefined;
      });
      await this.#scan;
    }
    let conflicts = 0;
    for (;;) {
      throwIfAborted(signal, `allocate ${this.#source.what}`);
      // Taken synchronously, so concurrent calls in this process never try the same number.
      const candidate = this.#next!;
      this.#next = candidate + 1;
      if (candidate > MAX_ARTIFACT_ID) {
        throw new StowageError("CONFLICT", `no ${this.#source.what} left: ${MAX_ARTIFACT_ID} is in use`, {
          reason: "IDS_EXHAUSTED",
        });
      }
      if (await this.#claims.claim(this.#source.claimName(candidate))) return candidate;
      if (++conflicts % RESCAN_AFTER_CONFLICTS === 0) await this.#rescan();
    }
  }
}
