import { throwIfAborted } from "./abort.js";
import { describeValue } from "./describe-value.js";
import { StowageError } from "./errors.js";

/**
 * Run `fn` over `items` with at most `limit` calls in flight; results keep the input order.
 * The first failure stops new calls from starting and is rethrown once running calls settle.
 */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
  signal?: AbortSignal,
): Promise<R[]> {
  if (!Number.isInteger(limit) || limit < 1) {
    throw new StowageError(
      "INVALID_INPUT",
      `concurrency must be a positive integer, got ${describeValue(limit)}`,
    );
  }
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  let failure: unknown;
  const worker = async () => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        throwIfAborted(signal, "mapConcurrent");
        results[index] = await fn(items[index]!, index);
      } catch (err) {
        if (!failed) {
          failed = true;
          failure = err;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed) throw failure;
  return results;
}
