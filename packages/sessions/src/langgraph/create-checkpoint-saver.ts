import { describeValue, StowageError } from "@stowage/core";
import type { CheckpointRecords } from "./checkpoint-records.js";
import { type CheckpointSaverOptions, StowageCheckpointSaver } from "./checkpoint-saver.js";

/**
 * A LangGraph checkpoint saver over records a backend keeps its own way (database rows): every
 * LangGraph rule (configs, the serializer, images and binary to `blobs`, pending sends, the order
 * of writes) is the saver's; `records` only keeps and finds what it is given.
 */
export function createCheckpointSaver(
  records: CheckpointRecords,
  options: CheckpointSaverOptions = {},
): StowageCheckpointSaver {
  if (typeof records !== "object" || records === null || typeof records.put !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      `createCheckpointSaver: records must be CheckpointRecords, got ${describeValue(records)}`,
    );
  }
  return new StowageCheckpointSaver(records, options);
}
