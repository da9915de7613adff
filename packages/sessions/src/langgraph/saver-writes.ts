import type { RunnableConfig } from "@langchain/core/runnables";
import type {
  ChannelVersions,
  Checkpoint,
  CheckpointMetadata,
  PendingWrite,
} from "@langchain/langgraph-checkpoint";
import { describeValue, StowageError } from "@stowage/core";
import { encodeValue } from "./channel-values.js";
import {
  assertCheckpointId,
  checkpointConfig,
  checkpointIdOf,
  namespaceOf,
  requireThreadId,
} from "./checkpoint-config.js";
import type { StoredChannelValue, StoredWrite } from "./checkpoint-records.js";
import { loadLangGraph } from "./langgraph-peer.js";
import { codecOf, dumpJson, type SaverContext } from "./saver-context.js";

/**
 * `put`: the checkpoint (its channel values apart) and the values of the channels `newVersions`
 * names, each stored once per channel and version; the others are read from where an earlier
 * checkpoint stored them.
 */
export async function putCheckpoint(
  context: SaverContext,
  config: RunnableConfig,
  checkpoint: Checkpoint,
  metadata: CheckpointMetadata,
  newVersions: ChannelVersions,
): Promise<RunnableConfig> {
  const threadId = requireThreadId(config, "put");
  const ns = namespaceOf(config);
  const parentId = checkpointIdOf(config);
  assertCheckpointId(checkpoint?.id, "checkpoint.id");
  const { channel_values: channelValues = {}, ...rest } = checkpoint;
  const codec = codecOf(context);
  const values: StoredChannelValue[] = await Promise.all(
    Object.entries(newVersions ?? {})
      .filter(([channel]) => Object.hasOwn(channelValues, channel))
      .map(async ([channel, version]) => ({
        channel,
        version: String(version),
        value: await encodeValue(codec, (channelValues as Record<string, unknown>)[channel]),
      })),
  );
  const [checkpointBytes, metadataBytes] = await Promise.all([
    dumpJson(codec.serde, rest, "checkpoint"),
    dumpJson(codec.serde, metadata, "metadata"),
  ]);
  await context.records.put(
    {
      threadId,
      ns,
      id: checkpoint.id,
      parentId,
      checkpoint: checkpointBytes,
      metadata: metadataBytes,
      versions: Object.entries(checkpoint.channel_versions ?? {}).map(([channel, version]) => [
        channel,
        String(version),
      ]),
    },
    values,
  );
  return checkpointConfig(threadId, ns, checkpoint.id);
}

/**
 * `putWrites`: one task's writes against a checkpoint. A write of a task and idx already stored
 * keeps what it has; a call of LangGraph's special channels only (error, interrupt, resume,
 * scheduled) replaces them, as LangGraph's own savers do.
 */
export async function putCheckpointWrites(
  context: SaverContext,
  config: RunnableConfig,
  writes: PendingWrite[],
  taskId: string,
  taskPath = "",
): Promise<void> {
  const threadId = requireThreadId(config, "putWrites");
  const id = checkpointIdOf(config);
  if (id === undefined)
    throw new StowageError("INVALID_INPUT", "putWrites: config.configurable.checkpoint_id is missing");
  if (typeof taskId !== "string" || taskId.length === 0)
    throw new StowageError(
      "INVALID_INPUT",
      `putWrites: taskId must be a non-empty string, got ${describeValue(taskId)}`,
    );
  if (typeof taskPath !== "string")
    throw new StowageError(
      "INVALID_INPUT",
      `putWrites: taskPath must be a string, got ${describeValue(taskPath)}`,
    );
  if (!Array.isArray(writes))
    throw new StowageError(
      "INVALID_INPUT",
      `putWrites: writes must be an array, got ${describeValue(writes)}`,
    );
  const { WRITES_IDX_MAP } = await loadLangGraph();
  const special = (channel: string) => Object.hasOwn(WRITES_IDX_MAP, channel);
  const codec = codecOf(context);
  const stored: StoredWrite[] = await Promise.all(
    writes.map(async ([channel, value], index) => {
      if (typeof channel !== "string")
        throw new StowageError(
          "INVALID_INPUT",
          `putWrites: a channel must be a string, got ${describeValue(channel)}`,
        );
      return {
        taskId,
        taskPath,
        idx: special(channel) ? WRITES_IDX_MAP[channel]! : index,
        channel,
        value: await encodeValue(codec, value),
      };
    }),
  );
  const replace = writes.length > 0 && writes.every(([channel]) => special(channel));
  await context.records.putWrites({ threadId, ns: namespaceOf(config), id }, stored, replace);
}
