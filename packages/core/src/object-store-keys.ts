import { throwIfAborted } from "./abort.js";
import type { ObjectStoreDriver } from "./define-object-store.js";
import { describeValue } from "./describe-value.js";
import { assertSafeKeyPrefix } from "./keys.js";
import type { IterateOptions } from "./object-store.js";
import { listLimit } from "./object-store-input.js";
import { iterateObjects, mapError } from "./object-store-operations.js";

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/** `ObjectStore.keys`: the driver's batches handed out key by key, else `iterate`'s keys. */
export function iterateKeys(driver: ObjectStoreDriver, options: IterateOptions = {}): AsyncIterable<string> {
  if (!driver.keys) return keysOfItems(driver, options);
  return { [Symbol.asyncIterator]: () => keysOfBatches(driver, options) };
}

async function* keysOfItems(driver: ObjectStoreDriver, options: IterateOptions): AsyncGenerator<string> {
  for await (const item of iterateObjects(driver, options)) yield item.key;
}

/**
 * An iterator written out rather than an async generator: a key of a batch already read is
 * answered with a resolved promise, one microtask for the caller's `await`, where a generator
 * takes several per key, most of a names-only listing's cost once the names are read (10,000
 * keys: ~3 ms of 10). The input is checked, and every error mapped, as `iterate` does; `next` is
 * called one at a time (as `for await` does), and `return` (a `break`) closes the driver's walk.
 */
function keysOfBatches(driver: ObjectStoreDriver, options: IterateOptions): AsyncIterator<string> {
  const prefix = options.prefix ?? "";
  const { signal } = options;
  const context = `${driver.name} keys ${describeValue(prefix)}`;
  let batches: AsyncIterator<readonly string[]> | undefined;
  let batch: readonly string[] = [];
  let index = 0;
  let finished = false;

  async function nextBatch(): Promise<IteratorResult<string>> {
    try {
      if (!batches) {
        assertSafeKeyPrefix(prefix);
        listLimit(options.pageSize);
        batches = driver.keys!({ prefix, signal })[Symbol.asyncIterator]();
      }
      for (;;) {
        throwIfAborted(signal, context);
        const read = await batches.next();
        if (read.done) {
          finished = true;
          return DONE;
        }
        batch = read.value;
        index = 0;
        if (batch.length > 0) return { done: false, value: batch[index++]! };
      }
    } catch (err) {
      finished = true;
      await batches?.return?.().catch(() => {});
      throw mapError(driver, err, context);
    }
  }

  return {
    next() {
      if (finished) return Promise.resolve(DONE);
      if (index < batch.length && !signal?.aborted)
        return Promise.resolve({ done: false, value: batch[index++]! });
      return nextBatch();
    },
    async return() {
      finished = true;
      await batches?.return?.();
      return DONE;
    },
  };
}
