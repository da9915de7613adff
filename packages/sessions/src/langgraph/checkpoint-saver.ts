import type { RunnableConfig } from "@langchain/core/runnables";
import type {
  BaseCheckpointSaver,
  ChannelVersions,
  Checkpoint,
  CheckpointListOptions,
  CheckpointMetadata,
  CheckpointTuple,
  DeltaChannelHistory,
  PendingWrite,
  SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { assertSessionId, describeValue, StowageError } from "@stowage/core";
import type { CheckpointBlobs } from "./channel-values.js";
import type { CheckpointRecords } from "./checkpoint-records.js";
import { lazySerializer, loadLangGraph } from "./langgraph-peer.js";
import type { SaverContext } from "./saver-context.js";
import { getCheckpointTuple, listCheckpointTuples } from "./saver-reads.js";
import { putCheckpoint, putCheckpointWrites } from "./saver-writes.js";

/** Options every Stowage checkpoint saver takes, whatever keeps its records. */
export interface CheckpointSaverOptions {
  /**
   * Where images and binary of at least 1 KiB in channel values and writes go, read back
   * identical: a blob store, or an owner's view of one. Default: none, every value is kept whole.
   */
  blobs?: CheckpointBlobs;
  /** LangGraph's serializer; default its own `JsonPlusSerializer`. */
  serde?: SerializerProtocol;
}

/**
 * A LangGraph checkpoint saver (`BaseCheckpointSaver` of `@langchain/langgraph-checkpoint`) over
 * a store of records: pass it as a graph's `checkpointer`. Thread ids are Stowage session ids, so
 * deleting a session deletes its thread. The LangGraph library is an optional peer loaded on first
 * use (UNAVAILABLE / PEER_MISSING without it), so a saver can be made where no graph runs.
 */
export class StowageCheckpointSaver implements BaseCheckpointSaver {
  serde: SerializerProtocol;
  readonly #context: SaverContext;

  constructor(records: CheckpointRecords, options: CheckpointSaverOptions = {}) {
    this.serde = options.serde ?? lazySerializer();
    this.#context = { records, blobs: options.blobs, serde: () => this.serde };
  }

  /** What `JSON.stringify` makes of a saver inside a config: its name, never its store. */
  toJSON(): string {
    return "[StowageCheckpointSaver]";
  }

  async get(config: RunnableConfig): Promise<Checkpoint | undefined> {
    return (await this.getTuple(config))?.checkpoint;
  }

  getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    return getCheckpointTuple(this.#context, config);
  }

  list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    return listCheckpointTuples(this.#context, config, options);
  }

  put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    return putCheckpoint(this.#context, config, checkpoint, metadata, newVersions);
  }

  putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath?: string,
  ): Promise<void> {
    return putCheckpointWrites(this.#context, config, writes, taskId, taskPath);
  }

  async deleteThread(threadId: string): Promise<void> {
    assertSessionId(threadId, "threadId");
    await this.#context.records.deleteThread(threadId);
  }

  /** LangGraph's own walk of the parent chain (`BaseCheckpointSaver`'s), over this saver's reads. */
  async getDeltaChannelHistory(options: {
    config: RunnableConfig;
    channels: string[];
  }): Promise<Record<string, DeltaChannelHistory>> {
    const { BaseCheckpointSaver: Base } = await loadLangGraph();
    return Base.prototype.getDeltaChannelHistory.call(this as unknown as BaseCheckpointSaver, options);
  }

  /** LangGraph's default: integer versions counting from 1. */
  getNextVersion(current: number | undefined): number {
    if (current === undefined) return 1;
    if (typeof current !== "number")
      throw new StowageError(
        "INVALID_INPUT",
        `channel versions are integers here, got ${describeValue(current)}`,
      );
    return current + 1;
  }
}
