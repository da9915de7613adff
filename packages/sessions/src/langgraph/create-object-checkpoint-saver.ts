import { assertKeyDirectoryPrefix, describeValue, type ObjectStore, StowageError } from "@stowage/core";
import { type CheckpointSaverOptions, StowageCheckpointSaver } from "./checkpoint-saver.js";
import { objectCheckpointRecords } from "./object-checkpoint-records.js";

/** Where checkpoints go when no prefix is given. */
const DEFAULT_PREFIX = "langgraph/";

export interface ObjectCheckpointSaverOptions extends CheckpointSaverOptions {
  /** Any ObjectStore: memory, the file system, S3, PostgreSQL. */
  store: ObjectStore;
  /** Key prefix of every thread: `""` or ending in `/`. Default `langgraph/`. */
  prefix?: string;
}

/**
 * A LangGraph checkpoint saver over any ObjectStore. Each checkpoint, each channel value (once per
 * channel and version) and each pending write is one object written create-only, so that writers
 * in several processes never overwrite each other: `<prefix><threadId>/c/<namespace>/<id>`, keyed
 * so that listing finds the newest first; `…/v/<namespace>/<channel>/<version>`;
 * `…/w/<namespace>/<id>/<task>/<idx>`. Binary of at least 1 KiB goes to `blobs`.
 */
export function createObjectCheckpointSaver(options: ObjectCheckpointSaverOptions): StowageCheckpointSaver {
  if (typeof options !== "object" || options === null || typeof options.store?.put !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      `createObjectCheckpointSaver: store must be an ObjectStore, got ${describeValue(options?.store)}`,
    );
  }
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  assertKeyDirectoryPrefix(prefix);
  return new StowageCheckpointSaver(objectCheckpointRecords(options.store, prefix), options);
}
