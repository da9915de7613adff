import type { OperationOptions } from "@stowage/core";

/**
 * A channel value or a pending write's value as a store keeps it: the serializer's type and bytes,
 * or, where binary moved to the blob store, `<type>+blobs` and the rewritten value (see
 * `channel-values.ts`).
 */
export interface StoredValue {
  type: string;
  bytes: Uint8Array;
}

/** One pending write of a checkpoint, as stored. */
export interface StoredWrite {
  taskId: string;
  /** The task's path (`""` when LangGraph gave none); writes are replayed ordered by path, task id, idx. */
  taskPath: string;
  /** The write's index in its task's writes; LangGraph's special channels use negative ones. */
  idx: number;
  channel: string;
  value: StoredValue;
}

/** Where a checkpoint is: its thread, its namespace (`""` for the root graph) and its id. */
export interface CheckpointAddress {
  threadId: string;
  ns: string;
  id: string;
}

/** A checkpoint as a store keeps it: everything but its channel values, serialized. */
export interface StoredCheckpoint extends CheckpointAddress {
  parentId: string | undefined;
  /** The serialized checkpoint without `channel_values`. */
  checkpoint: Uint8Array;
  /** The serialized metadata. */
  metadata: Uint8Array;
  /** Its `channel_versions`, each version as text: the values it reads. */
  versions: [channel: string, version: string][];
}

/** A checkpoint read back: its channel values (those stored at its versions) and pending writes. */
export interface LoadedCheckpoint extends StoredCheckpoint {
  values: [channel: string, value: StoredValue][];
  writes: StoredWrite[];
}

/** What `list` selects, newest checkpoint id first. */
export interface CheckpointQuery {
  threadId?: string;
  ns?: string;
  /** Only the checkpoint of this id. */
  id?: string;
  /** Only checkpoints whose id is lower than this one. */
  before?: string;
  /** Only checkpoints whose metadata has each key at a value JSON-equal to the one given (as JSON text). */
  filter?: [key: string, json: string][];
  limit?: number;
}

/**
 * Where a checkpoint saver keeps its records: objects in any ObjectStore, or database rows. Every
 * LangGraph rule (configs, the serializer, blobs, pending sends, write order) is the saver's; a
 * store only keeps and finds what it is given.
 */
export interface CheckpointRecords {
  /**
   * Stores a checkpoint and the channel values written with it, each value once per channel and
   * version. A checkpoint id stored before keeps what it has.
   */
  put(checkpoint: StoredCheckpoint, values: StoredChannelValue[], options?: OperationOptions): Promise<void>;
  /**
   * Stores writes of one task against a checkpoint: a write whose task and idx are stored keeps
   * what it has, unless `replace` (writes of LangGraph's special channels only), which replaces it.
   */
  putWrites(
    address: CheckpointAddress,
    writes: StoredWrite[],
    replace: boolean,
    options?: OperationOptions,
  ): Promise<void>;
  /** One checkpoint (the newest of its thread and namespace when `id` is undefined), or undefined. */
  get(
    address: Omit<CheckpointAddress, "id"> & { id: string | undefined },
    options?: OperationOptions,
  ): Promise<LoadedCheckpoint | undefined>;
  /** Checkpoints, newest id first. */
  list(query: CheckpointQuery, options?: OperationOptions): AsyncIterable<LoadedCheckpoint>;
  /** The pending writes of one checkpoint, in no particular order. */
  writesOf(address: CheckpointAddress, options?: OperationOptions): Promise<StoredWrite[]>;
  /** Every checkpoint, value and write of a thread. */
  deleteThread(threadId: string, options?: OperationOptions): Promise<void>;
}

/** A channel value written with a checkpoint, at its new version. */
export interface StoredChannelValue {
  channel: string;
  version: string;
  value: StoredValue;
}
