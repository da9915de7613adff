// `@stowage/sessions/backend`: for code that implements this package's contracts on a store of
// its own (`SessionBlobRepository`, the Agent SDK's `SessionStore`), as `@stowage/storage-postgres`
// does. An application that only captures, stores and restores sessions never needs it.

// A LangGraph checkpoint saver over a backend's own records (`@stowage/storage-postgres/langgraph`).
export type {
  CheckpointAddress,
  CheckpointQuery,
  CheckpointRecords,
  LoadedCheckpoint,
  StoredChannelValue,
  StoredCheckpoint,
  StoredValue,
  StoredWrite,
} from "./langgraph/checkpoint-records.js";
export type { CheckpointSaverOptions, StowageCheckpointSaver } from "./langgraph/checkpoint-saver.js";
export { createCheckpointSaver } from "./langgraph/create-checkpoint-saver.js";
export {
  assertLaterExpiry,
  assertOwner,
  assertRequestId,
  normalizeCreateInput,
  resolveDeleteExpiredOptions,
  resolveListSessionBlobsOptions,
  resolveSessionBlobLimits,
} from "./repository/validate-input.js";
export {
  assertAgentSdkInstalled,
  assertSessionStoreProjectKey,
  describeSessionKey,
  type EntryPayloads,
  encodeJsonLines,
  entryPayloadsFrom,
  loadSummaryFold,
  moveEntryPayloads,
  parseStoredEntryLine,
  parseStoredSummary,
  putBackEntryPayloads,
  type SerializedEntry,
  type StoredEntryLine,
  type StoredSessionKey,
  serializeEntries,
  storedEntryLine,
  toSessionScope,
  toStoredSessionKey,
} from "./session-store/index.js";
