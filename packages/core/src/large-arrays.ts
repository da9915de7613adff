// Loops, not spreads: `Math.max(...values)` and `push(...values)` pass every value as an argument,
// and past about 120,000 of them (the parts of a long transcript, a long sweep) the call overflows
// the stack. Every package takes these two instead of a spread over an array of unbounded length.

/** Appends every item of `items` to `target`, however many there are. */
export function pushAll<T>(target: T[], items: Iterable<T>): void {
  for (const item of items) target.push(item);
}
