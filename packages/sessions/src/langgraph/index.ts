// `@stowage/sessions/langgraph`: a LangGraph.js checkpoint saver over any ObjectStore. Needs
// `@langchain/langgraph-checkpoint` (an optional peer), loaded on the saver's first use.
export type { CheckpointBlobs } from "./channel-values.js";
export type { CheckpointSaverOptions, StowageCheckpointSaver } from "./checkpoint-saver.js";
export {
  createObjectCheckpointSaver,
  type ObjectCheckpointSaverOptions,
} from "./create-object-checkpoint-saver.js";
