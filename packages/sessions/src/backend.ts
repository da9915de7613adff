// `@stowage/sessions/backend`: for code that implements this package's contracts on a store of
// its own (`SessionBlobRepository`, the Agent SDK's `SessionStore`), as `@stowage/storage-postgres`
// does. An application that only captures, stores and restores sessions never needs it.
export {
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
  parseStoredEntry,
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
