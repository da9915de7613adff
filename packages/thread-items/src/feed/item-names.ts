import { randomBytes } from "node:crypto";

/** Hands out the names this writer posts items under (see `FeedLayout`). */
export interface ItemNamer {
  /** This writer's tie-breaker: 8 random hex digits, fixed for the namer's life. */
  readonly writer: string;
  /** A name later than every name this namer handed out before. */
  next(): string;
}

/**
 * Names from the wall clock in microseconds, made strictly increasing within this writer (a
 * second name in the same microsecond, or after the clock stepped back, takes the last one plus
 * one). Two writers order by their clocks; on an equal time, by writer id.
 */
export function createItemNamer(writer = randomBytes(4).toString("hex")): ItemNamer {
  let last = 0;
  return {
    writer,
    next() {
      last = Math.max(Date.now() * 1000, last + 1);
      return `${String(last).padStart(16, "0")}-${writer}`;
    },
  };
}
