import type { RunnableConfig } from "@langchain/core/runnables";
import type {
  Checkpoint,
  CheckpointListOptions,
  CheckpointMetadata,
  CheckpointPendingWrite,
  CheckpointTuple,
} from "@langchain/langgraph-checkpoint";
import { describeValue, StowageError } from "@stowage/core";
import { decodeValue, type ValueCodec } from "./channel-values.js";
import {
  assertCheckpointId,
  checkpointConfig,
  checkpointIdOf,
  givenNamespaceOf,
  namespaceOf,
  threadIdOf,
} from "./checkpoint-config.js";
import type { CheckpointQuery, LoadedCheckpoint, StoredWrite } from "./checkpoint-records.js";
import { type LangGraphCheckpoint, loadLangGraph } from "./langgraph-peer.js";
import { codecOf, type SaverContext } from "./saver-context.js";

/** `writes` in LangGraph's replay order: task path, task id, then idx. */
function ordered(langgraph: LangGraphCheckpoint, writes: readonly StoredWrite[]): StoredWrite[] {
  const { compareWritesSortKeys, writesSortKey } = langgraph;
  return [...writes].sort((a, b) =>
    compareWritesSortKeys(
      writesSortKey(a.taskPath, a.taskId, a.idx),
      writesSortKey(b.taskPath, b.taskId, b.idx),
    ),
  );
}

/**
 * A checkpoint of format 4 and later keeps the sends its parent's tasks wrote in its own values; an
 * older one gets them from its parent's writes here, as LangGraph's own savers do.
 */
async function migratePendingSends(
  context: SaverContext,
  langgraph: LangGraphCheckpoint,
  loaded: LoadedCheckpoint,
  checkpoint: Checkpoint,
): Promise<void> {
  const { TASKS, maxChannelVersion } = langgraph;
  const parentWrites = await context.records.writesOf({ ...loaded, id: loaded.parentId! });
  const sends = ordered(langgraph, parentWrites).filter((write) => write.channel === TASKS);
  if (sends.length === 0) return;
  const codec = codecOf(context);
  checkpoint.channel_values[TASKS] = await Promise.all(sends.map((write) => decodeValue(codec, write.value)));
  const versions = Object.values(checkpoint.channel_versions);
  checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : 1;
}

async function decodeValues(codec: ValueCodec, loaded: LoadedCheckpoint): Promise<Record<string, unknown>> {
  const values = await Promise.all(loaded.values.map(([, value]) => decodeValue(codec, value)));
  const channelValues: Record<string, unknown> = {};
  loaded.values.forEach(([channel], index) => {
    channelValues[channel] = values[index];
  });
  return channelValues;
}

/** A stored checkpoint as LangGraph reads it. */
async function toTuple(context: SaverContext, loaded: LoadedCheckpoint): Promise<CheckpointTuple> {
  const langgraph = await loadLangGraph();
  const codec = codecOf(context);
  const writes = ordered(langgraph, loaded.writes);
  const [checkpoint, metadata, channelValues, writeValues] = await Promise.all([
    codec.serde.loadsTyped("json", loaded.checkpoint) as Promise<Checkpoint>,
    codec.serde.loadsTyped("json", loaded.metadata) as Promise<CheckpointMetadata>,
    decodeValues(codec, loaded),
    Promise.all(writes.map((write) => decodeValue(codec, write.value))),
  ]);
  checkpoint.channel_values = channelValues;
  checkpoint.channel_versions ??= {};
  if (checkpoint.v < 4 && loaded.parentId !== undefined)
    await migratePendingSends(context, langgraph, loaded, checkpoint);
  const pendingWrites = writes.map(
    (write, index): CheckpointPendingWrite => [write.taskId, write.channel, writeValues[index]],
  );
  return {
    config: checkpointConfig(loaded.threadId, loaded.ns, loaded.id),
    checkpoint,
    metadata,
    ...(loaded.parentId === undefined
      ? {}
      : { parentConfig: checkpointConfig(loaded.threadId, loaded.ns, loaded.parentId) }),
    pendingWrites,
  };
}

/** `getTuple`: the checkpoint `config` names, or its thread and namespace's newest; undefined when none. */
export async function getCheckpointTuple(
  context: SaverContext,
  config: RunnableConfig,
): Promise<CheckpointTuple | undefined> {
  const threadId = threadIdOf(config);
  if (threadId === undefined) return undefined;
  const loaded = await context.records.get({ threadId, ns: namespaceOf(config), id: checkpointIdOf(config) });
  return loaded && toTuple(context, loaded);
}

/** The store's query for `list(config, options)`. */
function queryOf(config: RunnableConfig, options: CheckpointListOptions | undefined): CheckpointQuery {
  const query: CheckpointQuery = {};
  const threadId = threadIdOf(config);
  if (threadId !== undefined) query.threadId = threadId;
  const ns = givenNamespaceOf(config);
  if (ns !== undefined) query.ns = ns;
  const id = checkpointIdOf(config);
  if (id !== undefined) query.id = id;
  const before = options?.before?.configurable?.checkpoint_id;
  if (before !== undefined) {
    assertCheckpointId(before, "before.configurable.checkpoint_id");
    query.before = before;
  }
  const { limit, filter } = options ?? {};
  if (limit !== undefined && limit !== null) {
    if (!Number.isSafeInteger(limit) || limit < 0)
      throw new StowageError(
        "INVALID_INPUT",
        `list: limit must be a non-negative integer, got ${describeValue(limit)}`,
      );
    query.limit = limit;
  }
  if (filter !== undefined && filter !== null) {
    query.filter = Object.entries(filter)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => [key, JSON.stringify(value)]);
  }
  return query;
}

/** `list`: checkpoints newest first, of one thread (and namespace) or of every thread. */
export async function* listCheckpointTuples(
  context: SaverContext,
  config: RunnableConfig,
  options: CheckpointListOptions | undefined,
): AsyncGenerator<CheckpointTuple> {
  const query = queryOf(config ?? {}, options);
  if (query.limit === 0) return;
  for await (const loaded of context.records.list(query)) yield await toTuple(context, loaded);
}
