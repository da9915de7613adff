import { throwIfAborted } from "./abort.js";
import type { ObjectStoreDriver } from "./define-object-store.js";
import { describeValue } from "./describe-value.js";
import { assertSafeKeyPrefix } from "./keys.js";
import type { IterateOptions, KeyListing } from "./object-store.js";
import { listLimit } from "./object-store-input.js";
import { iterateObjects, mapError } from "./object-store-operations.js";

const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/** `ObjectStore.keys`: each walk a page at a time (`byPage`) or handed out key by key. */
export function iterateKeys(driver: ObjectStoreDriver, options: IterateOptions = {}): KeyListing {
  return {
    [Symbol.asyncIterator]: () => keysOfPages(pagesOfKeys(driver, options), options.signal),
    byPage: () => pagesOfKeys(driver, options),
  };
}

/**
 * The keys under the prefix, a page at a time: never an empty page, none longer than `pageSize`.
 * The driver's own batches where it has `keys`, else `iterate`'s keys gathered. The input is
 * checked, and every error mapped, as `iterate` does (at the first `next`); a `break` closes the
 * driver's walk.
 */
async function* pagesOfKeys(
  driver: ObjectStoreDriver,
  options: IterateOptions,
): AsyncGenerator<readonly string[]> {
  const prefix = options.prefix ?? "";
  assertSafeKeyPrefix(prefix);
  const pageSize = listLimit(options.pageSize);
  const { signal } = options;
  const context = `${driver.name} keys ${describeValue(prefix)}`;
  throwIfAborted(signal, context);
  try {
    const batches = driver.keys
      ? driver.keys({ prefix, signal, pageSize })
      : gatheredKeys(iterateObjects(driver, options), pageSize);
    for await (const batch of batches) {
      // A batch is yielded as it is (no copy), cut only if it holds more than was asked.
      for (let start = 0; start < batch.length; start += pageSize) {
        throwIfAborted(signal, context);
        yield batch.length <= pageSize ? batch : batch.slice(start, start + pageSize);
      }
      // Checked again before the walk reads on: the caller may have aborted while it held the page.
      throwIfAborted(signal, context);
    }
  } catch (err) {
    throw mapError(driver, err, context);
  }
}

async function* gatheredKeys(
  items: AsyncIterable<{ key: string }>,
  pageSize: number,
): AsyncGenerator<string[]> {
  let page: string[] = [];
  for await (const item of items) {
    page.push(item.key);
    if (page.length === pageSize) {
      yield page;
      page = [];
    }
  }
  if (page.length > 0) yield page;
}

/**
 * An iterator written out rather than an async generator: a key of a page already read is
 * answered with a resolved promise, one microtask for the caller's `await`, where a generator
 * takes several per key (10,000 keys: ~3 ms of 10). Still one promise a key, which `byPage`
 * saves. `next` is called one at a time (as `for await` does); an abort is seen before the next
 * key is handed out; `return` (a `break`) closes the walk.
 */
function keysOfPages(
  pages: AsyncGenerator<readonly string[]>,
  signal: AbortSignal | undefined,
): AsyncIterator<string> {
  let page: readonly string[] = [];
  let index = 0;
  let finished = false;

  async function nextPage(): Promise<IteratorResult<string>> {
    try {
      // The pages check the signal when resumed, before they read on.
      const read = await pages.next();
      if (read.done) {
        finished = true;
        return DONE;
      }
      page = read.value;
      index = 0;
      return { done: false, value: page[index++]! };
    } catch (err) {
      finished = true;
      throw err;
    }
  }

  return {
    next() {
      if (finished) return Promise.resolve(DONE);
      if (index < page.length && !signal?.aborted)
        return Promise.resolve({ done: false, value: page[index++]! });
      return nextPage();
    },
    async return() {
      finished = true;
      await pages.return(undefined);
      return DONE;
    },
  };
}
