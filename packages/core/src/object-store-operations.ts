import { abortedError, throwIfAborted } from "./abort.js";
import { assertContentType } from "./content-type.js";
import type { ObjectStoreDriver } from "./define-object-store.js";
import { describeValue } from "./describe-value.js";
import { StowageError } from "./errors.js";
import { assertSafeKey, assertSafeKeyPrefix } from "./keys.js";
import type {
  IterateOptions,
  ListItem,
  ListOptions,
  ListPage,
  MoveOptions,
  ObjectBody,
  ObjectInfo,
  OperationOptions,
  PutOptions,
  PutResult,
} from "./object-store.js";
import { assertBody, assertCursor, assertIfNoneMatch, listLimit } from "./object-store-input.js";
import { fromSystemError } from "./system-errors.js";

// The ObjectStore methods `defineObjectStore` assembles, each over the driver it wraps: inputs are
// checked here, before the driver is called, and every error leaves through `mapError`.

/** Maps anything a driver threw to a StowageError (through its own `mapError`, else errno mapping). */
export function mapError(driver: ObjectStoreDriver, err: unknown, context: string): StowageError {
  return StowageError.is(err) ? err : (driver.mapError ?? fromSystemError)(err, context);
}

/** Runs one driver call: ABORTED before it starts or once the signal fired, every error mapped. */
export async function run<T>(
  driver: ObjectStoreDriver,
  operation: string,
  subject: string | undefined,
  signal: AbortSignal | undefined,
  action: () => Promise<T>,
): Promise<T> {
  const context =
    subject === undefined
      ? `${driver.name} ${operation}`
      : `${driver.name} ${operation} ${describeValue(subject)}`;
  throwIfAborted(signal, context);
  try {
    return await action();
  } catch (err) {
    if (signal?.aborted && !StowageError.is(err, "ABORTED")) throw abortedError(signal, context);
    throw mapError(driver, err, context);
  }
}

/** The driver's stream, with errors that break it off mid-body mapped like every other error. */
export function mappedStream(
  driver: ObjectStoreDriver,
  source: ReadableStream<Uint8Array>,
  context: string,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (err) {
          throw mapError(driver, err, context);
        }
        if (chunk.done) controller.close();
        else controller.enqueue(chunk.value);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}

export async function listObjects(driver: ObjectStoreDriver, options: ListOptions = {}): Promise<ListPage> {
  const prefix = options.prefix ?? "";
  assertSafeKeyPrefix(prefix);
  assertCursor(options.cursor);
  const limit = listLimit(options.limit);
  return run(driver, "list", prefix, options.signal, () =>
    driver.list({ prefix, cursor: options.cursor, limit, signal: options.signal }),
  );
}

/** `iterate` for a driver without its own: `list` page after page, refusing a cursor that stands still. */
async function* paginate(
  driver: ObjectStoreDriver,
  prefix: string,
  pageSize: number,
  signal?: AbortSignal,
): AsyncGenerator<ListItem> {
  let cursor: string | undefined;
  for (;;) {
    const page = await listObjects(driver, { prefix, cursor, limit: pageSize, signal });
    yield* page.items;
    if (page.cursor === undefined) return;
    if (page.cursor === cursor) {
      throw new StowageError("INTERNAL", `${driver.name} list returned a cursor that does not advance`);
    }
    cursor = page.cursor;
  }
}

export async function* iterateObjects(
  driver: ObjectStoreDriver,
  options: IterateOptions = {},
): AsyncGenerator<ListItem> {
  const prefix = options.prefix ?? "";
  assertSafeKeyPrefix(prefix);
  const pageSize = listLimit(options.pageSize);
  const { signal } = options;
  if (!driver.iterate) {
    yield* paginate(driver, prefix, pageSize, signal);
    return;
  }
  const context = `${driver.name} iterate ${describeValue(prefix)}`;
  throwIfAborted(signal, context);
  try {
    for await (const item of driver.iterate({ prefix, signal })) {
      throwIfAborted(signal, context);
      yield item;
    }
  } catch (err) {
    throw mapError(driver, err, context);
  }
}

export async function putObject(
  driver: ObjectStoreDriver,
  key: string,
  body: ObjectBody,
  options: PutOptions = {},
): Promise<PutResult> {
  assertSafeKey(key);
  assertBody(body);
  assertIfNoneMatch(options.ifNoneMatch);
  if (options.contentType !== undefined) assertContentType(options.contentType);
  return run(driver, "put", key, options.signal, () => driver.put(key, body, options));
}

export async function headObject(
  driver: ObjectStoreDriver,
  key: string,
  options: OperationOptions = {},
): Promise<ObjectInfo | null> {
  assertSafeKey(key);
  return run(driver, "head", key, options.signal, () => driver.head(key, options));
}

export async function moveObject(
  driver: ObjectStoreDriver,
  from: string,
  to: string,
  options: MoveOptions = {},
): Promise<PutResult> {
  assertSafeKey(from, "from");
  assertSafeKey(to, "to");
  assertIfNoneMatch(options.ifNoneMatch);
  const { name } = driver;
  return run(driver, "move", `${from} -> ${to}`, options.signal, async () => {
    if (from === to) {
      const info = await driver.head(from, options);
      if (!info) throw new StowageError("NOT_FOUND", `${name} move: ${describeValue(from)} does not exist`);
      if (options.ifNoneMatch === "*") {
        throw new StowageError("ALREADY_EXISTS", `${name} move: ${describeValue(to)} already exists`);
      }
      return { key: to, size: info.size, created: false };
    }
    if (driver.move) return driver.move(from, to, options);
    const info = await driver.head(from, options);
    const body = info && (await driver.stream(from, options));
    if (!info || !body)
      throw new StowageError("NOT_FOUND", `${name} move: ${describeValue(from)} does not exist`);
    const result = await driver.put(to, body, {
      ifNoneMatch: options.ifNoneMatch,
      signal: options.signal,
      ...(info.contentType === undefined ? {} : { contentType: info.contentType }),
    });
    await driver.delete(from, options);
    return result;
  });
}

export async function touchObject(
  driver: ObjectStoreDriver,
  key: string,
  options: OperationOptions = {},
): Promise<boolean> {
  assertSafeKey(key);
  const nativeTouch = driver.touch;
  if (nativeTouch) return run(driver, "touch", key, options.signal, () => nativeTouch(key, options));
  // Without a native touch, rewriting the same bytes is the only way to refresh lastModified.
  return run(driver, "touch", key, options.signal, async () => {
    const info = await driver.head(key, options);
    const bytes = info && (await driver.get(key, options));
    if (!info || !bytes) return false;
    await driver.put(key, bytes, {
      signal: options.signal,
      ...(info.contentType === undefined ? {} : { contentType: info.contentType }),
    });
    return true;
  });
}
