import { seededRandom } from "@stowage/core/testing";

/** A seeded pseudo-random generator (mulberry32), so that generated fixtures are identical on every run. */
export class Prng {
  readonly #random: () => number;

  constructor(seed: number) {
    this.#random = seededRandom(seed);
  }

  /** A float in [0, 1). */
  next(): number {
    return this.#random();
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(values: readonly T[]): T {
    return values[Math.floor(this.next() * values.length)]!;
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  /** `length` characters from `alphabet`. */
  chars(length: number, alphabet = "0123456789abcdef"): string {
    let out = "";
    for (let i = 0; i < length; i++) out += alphabet[Math.floor(this.next() * alphabet.length)];
    return out;
  }

  /** A version-4-shaped UUID. */
  uuid(): string {
    const hex = this.chars(32);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${this.pick(["8", "9", "a", "b"])}${hex.slice(17, 20)}-${hex.slice(20)}`;
  }

  /** An Anthropic-style id: `toolu_01` + 22 base-62 characters. */
  anthropicId(prefix: string): string {
    return `${prefix}_01${this.chars(22, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")}`;
  }
}
