import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { StowageError } from "@stowage/core";
import type { CheckpointBlobs, ValueCodec } from "./channel-values.js";
import type { CheckpointRecords } from "./checkpoint-records.js";

/** What every operation of a saver works with; see `StowageCheckpointSaver`. */
export interface SaverContext {
  records: CheckpointRecords;
  blobs: CheckpointBlobs | undefined;
  /** The saver's serializer now (a caller may replace `serde`). */
  serde(): SerializerProtocol;
}

export const codecOf = (context: SaverContext): ValueCodec => ({
  serde: context.serde(),
  blobs: context.blobs,
});

/** Checkpoints and metadata as JSON text: what a store filters on. */
export async function dumpJson(serde: SerializerProtocol, value: unknown, what: string): Promise<Uint8Array> {
  const [type, bytes] = await serde.dumpsTyped(value);
  if (type !== "json") {
    throw new StowageError(
      "INVALID_INPUT",
      `the saver's serializer gave type ${type} for a ${what}; checkpoints and metadata must serialize to json`,
    );
  }
  return bytes;
}
