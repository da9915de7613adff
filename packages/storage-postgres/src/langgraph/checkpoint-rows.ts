import type { OperationOptions } from "@stowage/core";
import { StowageError } from "@stowage/core";
import type {
  CheckpointAddress,
  CheckpointQuery,
  CheckpointRecords,
  LoadedCheckpoint,
  StoredChannelValue,
  StoredCheckpoint,
  StoredWrite,
} from "@stowage/sessions/backend";
import { type SQL, sql } from "drizzle-orm";
import { plainBytes, rowsOf, type StowageDatabase } from "../database.js";
import { runDatabase } from "../run-database.js";

/** Checkpoints one query of `list` reads: a limit or a filter stops it without reading every one. */
const LIST_PAGE = 200;

interface RowsContext {
  db: StowageDatabase;
  namespace: string;
}

// One statement per operation: a checkpoint's row, its values and its writes come back in one
// round trip, the values and writes as JSON arrays with base64 bytes. Each value is looked up by
// its primary key (the LIMIT keeps the lookup a nested loop): joined instead, the planner may hash
// every value of the thread for each checkpoint (36 ms instead of 0.2 ms at 10,000 checkpoints).
const SELECT_LOADED = sql`
  SELECT cp.thread_id, cp.checkpoint_ns, cp.checkpoint_id, cp.parent_id, cp.checkpoint, cp.metadata, cp.versions,
    (SELECT coalesce(json_agg(json_build_array(e->>0, v.type, encode(v.value, 'base64'))), '[]'::json)
       FROM json_array_elements(cp.versions::json) AS e,
       LATERAL (SELECT lv.type, lv.value FROM langgraph_values AS lv
         WHERE lv.namespace = cp.namespace AND lv.thread_id = cp.thread_id AND lv.checkpoint_ns = cp.checkpoint_ns
           AND lv.channel = e->>0 AND lv.version = e->>1 LIMIT 1) AS v) AS channel_values,
    (SELECT coalesce(json_agg(json_build_array(w.task_id, w.task_path, w.idx, w.channel, w.type, encode(w.value, 'base64'))), '[]'::json)
       FROM langgraph_writes AS w
      WHERE w.namespace = cp.namespace AND w.thread_id = cp.thread_id AND w.checkpoint_ns = cp.checkpoint_ns
        AND w.checkpoint_id = cp.checkpoint_id) AS pending_writes
  FROM langgraph_checkpoints AS cp`;

const base64Bytes = (text: string) => {
  const buffer = Buffer.from(text, "base64");
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
};
const jsonOf = (value: unknown) => (typeof value === "string" ? JSON.parse(value) : value) as unknown[][];

function corrupt(row: Record<string, unknown>, why: string): StowageError {
  return new StowageError("INTEGRITY", `LangGraph checkpoint row is not readable: ${why}`, {
    reason: "CORRUPT_ROW",
    details: { threadId: row.thread_id, checkpointNs: row.checkpoint_ns, checkpointId: row.checkpoint_id },
  });
}

function writeOf([taskId, taskPath, idx, channel, type, value]: unknown[]): StoredWrite {
  return {
    taskId: String(taskId),
    taskPath: String(taskPath),
    idx: Number(idx),
    channel: String(channel),
    value: { type: String(type), bytes: base64Bytes(String(value)) },
  };
}

function loadedOf(row: Record<string, unknown>): LoadedCheckpoint {
  let versions: [string, string][];
  try {
    versions = JSON.parse(String(row.versions)) as [string, string][];
  } catch {
    throw corrupt(row, "its versions are not JSON");
  }
  if (!Array.isArray(versions)) throw corrupt(row, "its versions are not a list");
  return {
    threadId: String(row.thread_id),
    ns: String(row.checkpoint_ns),
    id: String(row.checkpoint_id),
    parentId: typeof row.parent_id === "string" ? row.parent_id : undefined,
    checkpoint: plainBytes(row.checkpoint),
    metadata: plainBytes(row.metadata),
    versions,
    values: jsonOf(row.channel_values).map(([channel, type, value]) => [
      String(channel),
      { type: String(type), bytes: base64Bytes(String(value)) },
    ]),
    writes: jsonOf(row.pending_writes).map(writeOf),
  };
}

async function put(
  context: RowsContext,
  checkpoint: StoredCheckpoint,
  values: StoredChannelValue[],
  { signal }: OperationOptions = {},
): Promise<void> {
  const { namespace } = context;
  const { threadId, ns } = checkpoint;
  const insertCheckpoint = sql`
    INSERT INTO langgraph_checkpoints
      (namespace, thread_id, checkpoint_ns, checkpoint_id, parent_id, checkpoint, metadata, versions)
    VALUES (${namespace}, ${threadId}, ${ns}, ${checkpoint.id}, ${checkpoint.parentId ?? null},
      ${checkpoint.checkpoint}, ${checkpoint.metadata}, ${JSON.stringify(checkpoint.versions)})
    ON CONFLICT DO NOTHING`;
  // One statement: the checkpoint is never seen without the values it reads.
  const statement =
    values.length === 0
      ? insertCheckpoint
      : sql`WITH stored_values AS (
          INSERT INTO langgraph_values (namespace, thread_id, checkpoint_ns, channel, version, type, value)
          VALUES ${sql.join(
            values.map(
              ({ channel, version, value }) =>
                sql`(${namespace}, ${threadId}, ${ns}, ${channel}, ${version}, ${value.type}, ${value.bytes})`,
            ),
            sql`, `,
          )}
          ON CONFLICT DO NOTHING)
        ${insertCheckpoint}`;
  await runDatabase("LangGraph put", signal, () => context.db.execute(statement));
}

async function putWrites(
  context: RowsContext,
  { threadId, ns, id }: CheckpointAddress,
  writes: StoredWrite[],
  replace: boolean,
  { signal }: OperationOptions = {},
): Promise<void> {
  if (writes.length === 0) return;
  const rows = writes.map(
    (write) =>
      sql`(${context.namespace}, ${threadId}, ${ns}, ${id}, ${write.taskId}, ${write.idx}, ${write.taskPath}, ${write.channel}, ${write.value.type}, ${write.value.bytes})`,
  );
  const onConflict = replace
    ? sql`ON CONFLICT (namespace, thread_id, checkpoint_ns, checkpoint_id, task_id, idx) DO UPDATE SET
        task_path = EXCLUDED.task_path, channel = EXCLUDED.channel, type = EXCLUDED.type, value = EXCLUDED.value`
    : sql`ON CONFLICT DO NOTHING`;
  await runDatabase("LangGraph putWrites", signal, () =>
    context.db.execute(sql`
      INSERT INTO langgraph_writes
        (namespace, thread_id, checkpoint_ns, checkpoint_id, task_id, idx, task_path, channel, type, value)
      VALUES ${sql.join(rows, sql`, `)} ${onConflict}`),
  );
}

async function get(
  context: RowsContext,
  { threadId, ns, id }: Omit<CheckpointAddress, "id"> & { id: string | undefined },
  { signal }: OperationOptions = {},
): Promise<LoadedCheckpoint | undefined> {
  const which = id === undefined ? sql`` : sql`AND cp.checkpoint_id = ${id}`;
  const result = await runDatabase("LangGraph getTuple", signal, () =>
    context.db.execute(sql`${SELECT_LOADED}
      WHERE cp.namespace = ${context.namespace} AND cp.thread_id = ${threadId} AND cp.checkpoint_ns = ${ns} ${which}
      ORDER BY cp.checkpoint_id DESC LIMIT 1`),
  );
  const [row] = rowsOf(result);
  return row ? loadedOf(row) : undefined;
}

/** The query's conditions; `after` continues a listing past the last row read. */
function conditions(context: RowsContext, query: CheckpointQuery, after?: LoadedCheckpoint): SQL {
  const parts: SQL[] = [sql`cp.namespace = ${context.namespace}`];
  if (query.threadId !== undefined) parts.push(sql`cp.thread_id = ${query.threadId}`);
  if (query.ns !== undefined) parts.push(sql`cp.checkpoint_ns = ${query.ns}`);
  if (query.id !== undefined) parts.push(sql`cp.checkpoint_id = ${query.id}`);
  if (query.before !== undefined) parts.push(sql`cp.checkpoint_id < ${query.before}`);
  // JSON-equal values: jsonb compares as JSON does; a key that is absent is NULL, never equal.
  for (const [key, json] of query.filter ?? [])
    parts.push(sql`convert_from(cp.metadata, 'UTF8')::jsonb -> ${key} = ${json}::jsonb`);
  if (after)
    parts.push(
      sql`(cp.checkpoint_id, cp.thread_id, cp.checkpoint_ns) < (${after.id}, ${after.threadId}, ${after.ns})`,
    );
  return sql.join(parts, sql` AND `);
}

async function* list(
  context: RowsContext,
  query: CheckpointQuery,
  { signal }: OperationOptions = {},
): AsyncGenerator<LoadedCheckpoint> {
  let remaining = query.limit ?? Number.POSITIVE_INFINITY;
  let after: LoadedCheckpoint | undefined;
  while (remaining > 0) {
    const page = Math.min(remaining, LIST_PAGE);
    const result = await runDatabase("LangGraph list", signal, () =>
      context.db.execute(sql`${SELECT_LOADED} WHERE ${conditions(context, query, after)}
        ORDER BY cp.checkpoint_id DESC, cp.thread_id DESC, cp.checkpoint_ns DESC LIMIT ${page}`),
    );
    const rows = rowsOf(result);
    for (const row of rows) {
      after = loadedOf(row);
      remaining--;
      yield after;
    }
    if (rows.length < page) return;
  }
}

async function writesOf(
  context: RowsContext,
  { threadId, ns, id }: CheckpointAddress,
  { signal }: OperationOptions = {},
): Promise<StoredWrite[]> {
  const result = await runDatabase("LangGraph writes", signal, () =>
    context.db.execute(sql`
      SELECT task_id, task_path, idx, channel, type, value FROM langgraph_writes
      WHERE namespace = ${context.namespace} AND thread_id = ${threadId} AND checkpoint_ns = ${ns}
        AND checkpoint_id = ${id}`),
  );
  return rowsOf(result).map((row) => ({
    taskId: String(row.task_id),
    taskPath: String(row.task_path),
    idx: Number(row.idx),
    channel: String(row.channel),
    value: { type: String(row.type), bytes: plainBytes(row.value) },
  }));
}

async function deleteThread(
  context: RowsContext,
  threadId: string,
  { signal }: OperationOptions = {},
): Promise<void> {
  const { namespace } = context;
  await runDatabase("LangGraph deleteThread", signal, () =>
    context.db.execute(sql`
      WITH deleted_values AS (
        DELETE FROM langgraph_values WHERE namespace = ${namespace} AND thread_id = ${threadId}),
      deleted_writes AS (
        DELETE FROM langgraph_writes WHERE namespace = ${namespace} AND thread_id = ${threadId})
      DELETE FROM langgraph_checkpoints WHERE namespace = ${namespace} AND thread_id = ${threadId}`),
  );
}

/** Checkpoint records as rows of the `langgraph_*` tables, in one namespace. */
export function checkpointRows(db: StowageDatabase, namespace: string): CheckpointRecords {
  const context: RowsContext = { db, namespace };
  return {
    put: (checkpoint, values, options) => put(context, checkpoint, values, options),
    putWrites: (address, writes, replace, options) => putWrites(context, address, writes, replace, options),
    get: (address, options) => get(context, address, options),
    list: (query, options) => list(context, query, options),
    writesOf: (address, options) => writesOf(context, address, options),
    deleteThread: (threadId, options) => deleteThread(context, threadId, options),
  };
}
