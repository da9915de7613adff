import { isDeepStrictEqual } from "node:util";
import { mapConcurrent, type ObjectStore, type OperationOptions, StowageError } from "@stowage/core";
import type {
  CheckpointAddress,
  CheckpointQuery,
  CheckpointRecords,
  LoadedCheckpoint,
  StoredChannelValue,
  StoredCheckpoint,
  StoredWrite,
} from "./checkpoint-records.js";
import {
  type CheckpointKeys,
  checkpointKey,
  checkpointsDirectory,
  nameSegment,
  parseCheckpointKey,
  threadDirectory,
  valueKey,
  writeKey,
  writesDirectory,
} from "./object-checkpoint-keys.js";
import { decodeRecord, encodeRecord } from "./object-record.js";

/** Objects read or written at once by one operation (S3 round trips overlap). */
const CONCURRENCY = 16;
/** Times `get` lists a namespace again when its newest checkpoint vanished before it was read. */
const LATEST_ATTEMPTS = 4;

interface ObjectRecordsContext extends CheckpointKeys {
  store: ObjectStore;
}

const isAlreadyExists = (err: unknown) => StowageError.is(err, "ALREADY_EXISTS");

/** A create-only put that leaves what is there: a record of a key is written once. */
async function putOnce(context: ObjectRecordsContext, key: string, bytes: Uint8Array, signal?: AbortSignal) {
  try {
    await context.store.put(key, bytes, { ifNoneMatch: "*", signal });
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

async function put(
  context: ObjectRecordsContext,
  checkpoint: StoredCheckpoint,
  values: StoredChannelValue[],
  { signal }: OperationOptions = {},
): Promise<void> {
  const { threadId, ns } = checkpoint;
  // Values first: a checkpoint is never seen before the values it reads.
  await mapConcurrent(
    values,
    CONCURRENCY,
    ({ channel, version, value }) =>
      putOnce(
        context,
        valueKey(context, threadId, ns, channel, version),
        encodeRecord({ stowageCheckpointValue: 1, threadId, ns, channel, version, type: value.type }, [
          value.bytes,
        ]),
        signal,
      ),
    signal,
  );
  const header = {
    stowageCheckpoint: 1,
    threadId,
    ns,
    id: checkpoint.id,
    parentId: checkpoint.parentId ?? null,
    versions: checkpoint.versions,
  };
  await putOnce(
    context,
    checkpointKey(context, threadId, ns, checkpoint.id),
    encodeRecord(header, [checkpoint.checkpoint, checkpoint.metadata]),
    signal,
  );
}

async function putWrites(
  context: ObjectRecordsContext,
  address: CheckpointAddress,
  writes: StoredWrite[],
  replace: boolean,
  { signal }: OperationOptions = {},
): Promise<void> {
  const { threadId, ns, id } = address;
  await mapConcurrent(
    writes,
    CONCURRENCY,
    async (write) => {
      const key = writeKey(context, threadId, ns, id, write.taskId, write.idx);
      const header = {
        stowageCheckpointWrite: 1,
        threadId,
        ns,
        id,
        taskId: write.taskId,
        taskPath: write.taskPath,
        idx: write.idx,
        channel: write.channel,
        type: write.value.type,
      };
      const bytes = encodeRecord(header, [write.value.bytes]);
      if (replace) await context.store.put(key, bytes, { signal });
      else await putOnce(context, key, bytes, signal);
    },
    signal,
  );
}

/** A checkpoint's record, or null when it is not stored. */
async function readCheckpoint(
  context: ObjectRecordsContext,
  key: string,
  expected: { threadId: string; id: string; ns?: string },
  signal?: AbortSignal,
): Promise<StoredCheckpoint | null> {
  const bytes = await context.store.get(key, { signal });
  if (bytes === null) return null;
  const { header, parts } = decodeRecord(key, bytes, { stowageCheckpoint: 1, ...expected });
  if (typeof header.ns !== "string" || !Array.isArray(header.versions) || parts.length !== 2) {
    throw new StowageError(
      "INTEGRITY",
      `checkpoint record ${key} is not readable: its header is incomplete`,
      {
        reason: "CORRUPT_RECORD",
        details: { key },
      },
    );
  }
  return {
    threadId: expected.threadId,
    ns: header.ns,
    id: expected.id,
    parentId: typeof header.parentId === "string" ? header.parentId : undefined,
    checkpoint: parts[0]!,
    metadata: parts[1]!,
    versions: header.versions as [string, string][],
  };
}

async function writesOf(
  context: ObjectRecordsContext,
  { threadId, ns, id }: CheckpointAddress,
  { signal }: OperationOptions = {},
): Promise<StoredWrite[]> {
  const keys: string[] = [];
  for await (const item of context.store.iterate({
    prefix: writesDirectory(context, threadId, ns, id),
    signal,
  }))
    keys.push(item.key);
  const writes = await mapConcurrent(
    keys,
    CONCURRENCY,
    async (key): Promise<StoredWrite | undefined> => {
      const bytes = await context.store.get(key, { signal });
      if (bytes === null) return undefined;
      const { header, parts } = decodeRecord(key, bytes, { stowageCheckpointWrite: 1, threadId, ns, id });
      return {
        taskId: String(header.taskId),
        taskPath: String(header.taskPath ?? ""),
        idx: Number(header.idx),
        channel: String(header.channel),
        value: { type: String(header.type), bytes: parts[0]! },
      };
    },
    signal,
  );
  return writes.filter((write) => write !== undefined);
}

/** A checkpoint with its channel values (those stored at its versions) and its writes. */
async function load(
  context: ObjectRecordsContext,
  checkpoint: StoredCheckpoint,
  signal?: AbortSignal,
): Promise<LoadedCheckpoint> {
  const { threadId, ns } = checkpoint;
  const [values, writes] = await Promise.all([
    mapConcurrent(
      checkpoint.versions,
      CONCURRENCY,
      async ([channel, version]) => {
        const key = valueKey(context, threadId, ns, channel, version);
        const bytes = await context.store.get(key, { signal });
        if (bytes === null) return undefined;
        const expected = { stowageCheckpointValue: 1, threadId, ns, channel, version };
        const { header, parts } = decodeRecord(key, bytes, expected);
        return [
          channel,
          { type: String(header.type), bytes: parts[0]! },
        ] as LoadedCheckpoint["values"][number];
      },
      signal,
    ),
    writesOf(context, checkpoint, { signal }),
  ]);
  return { ...checkpoint, values: values.filter((value) => value !== undefined), writes };
}

async function get(
  context: ObjectRecordsContext,
  address: Omit<CheckpointAddress, "id"> & { id: string | undefined },
  { signal }: OperationOptions = {},
): Promise<LoadedCheckpoint | undefined> {
  const { threadId, ns } = address;
  for (let attempt = 1; attempt <= LATEST_ATTEMPTS; attempt++) {
    let id = address.id;
    if (id === undefined) {
      // Keys sort newest first: the first one listed is the newest checkpoint.
      const page = await context.store.list({
        prefix: checkpointsDirectory(context, threadId, ns),
        limit: 1,
        signal,
      });
      const first = page.items[0] && parseCheckpointKey(context, page.items[0].key);
      if (!first) return undefined;
      id = first.id;
    }
    const checkpoint = await readCheckpoint(
      context,
      checkpointKey(context, threadId, ns, id),
      { threadId, ns, id },
      signal,
    );
    if (checkpoint) return load(context, checkpoint, signal);
    // A checkpoint named by its id is not there; the newest one was deleted since it was listed.
    if (address.id !== undefined) return undefined;
  }
  return undefined;
}

const matches = (metadata: Uint8Array, filter: CheckpointQuery["filter"]) => {
  if (!filter || filter.length === 0) return true;
  const parsed = JSON.parse(Buffer.from(metadata).toString("utf8")) as Record<string, unknown>;
  return filter.every(
    ([key, json]) => Object.hasOwn(parsed, key) && isDeepStrictEqual(parsed[key], JSON.parse(json)),
  );
};

/** Every checkpoint key the query can select, newest id first. */
async function candidates(context: ObjectRecordsContext, query: CheckpointQuery, signal?: AbortSignal) {
  const prefix =
    query.threadId === undefined
      ? context.prefix
      : query.ns === undefined
        ? `${threadDirectory(context, query.threadId)}c/`
        : checkpointsDirectory(context, query.threadId, query.ns);
  const nsSegment = query.ns === undefined ? undefined : nameSegment(query.ns);
  const found: { key: string; threadId: string; id: string; idSegment: string }[] = [];
  for await (const item of context.store.iterate({ prefix, signal })) {
    const parsed = parseCheckpointKey(context, item.key);
    if (!parsed || (nsSegment !== undefined && parsed.nsSegment !== nsSegment)) continue;
    if (query.id !== undefined && parsed.id !== query.id) continue;
    if (query.before !== undefined && !(parsed.id < query.before)) continue;
    found.push({
      key: item.key,
      threadId: parsed.threadId,
      id: parsed.id,
      idSegment: item.key.slice(item.key.lastIndexOf("/") + 1),
    });
  }
  return found.sort((a, b) =>
    a.idSegment < b.idSegment ? -1 : a.idSegment > b.idSegment ? 1 : a.key < b.key ? -1 : 1,
  );
}

async function* list(
  context: ObjectRecordsContext,
  query: CheckpointQuery,
  { signal }: OperationOptions = {},
): AsyncGenerator<LoadedCheckpoint> {
  const found = await candidates(context, query, signal);
  let remaining = query.limit ?? Number.POSITIVE_INFINITY;
  // Read a window at a time, in order: a limit or a filter stops it without reading everything.
  for (let start = 0; start < found.length && remaining > 0; start += CONCURRENCY) {
    const window = await mapConcurrent(
      found.slice(start, start + CONCURRENCY),
      CONCURRENCY,
      async ({ key, threadId, id }) => {
        const checkpoint = await readCheckpoint(context, key, { threadId, id }, signal);
        if (!checkpoint || (query.ns !== undefined && checkpoint.ns !== query.ns)) return undefined;
        return matches(checkpoint.metadata, query.filter) ? load(context, checkpoint, signal) : undefined;
      },
      signal,
    );
    for (const loaded of window) {
      if (loaded === undefined || remaining <= 0) continue;
      remaining--;
      yield loaded;
    }
  }
}

async function deleteThread(
  context: ObjectRecordsContext,
  threadId: string,
  { signal }: OperationOptions = {},
): Promise<void> {
  const keys: string[] = [];
  for await (const item of context.store.iterate({ prefix: threadDirectory(context, threadId), signal }))
    keys.push(item.key);
  await mapConcurrent(keys, CONCURRENCY, (key) => context.store.delete(key, { signal }), signal);
}

/** Checkpoint records as objects of `store` below `prefix` (see `createObjectCheckpointSaver`). */
export function objectCheckpointRecords(store: ObjectStore, prefix: string): CheckpointRecords {
  const context: ObjectRecordsContext = { store, prefix };
  return {
    put: (checkpoint, values, options) => put(context, checkpoint, values, options),
    putWrites: (address, writes, replace, options) => putWrites(context, address, writes, replace, options),
    get: (address, options) => get(context, address, options),
    list: (query, options) => list(context, query, options),
    writesOf: (address, options) => writesOf(context, address, options),
    deleteThread: (threadId, options) => deleteThread(context, threadId, options),
  };
}
