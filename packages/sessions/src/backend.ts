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
  encodeJsonLines,
  loadSummaryFold,
  parseStoredEntry,
  parseStoredSummary,
  type SerializedEntry,
  type StoredSessionKey,
  serializeEntries,
  toSessionScope,
  toStoredSessionKey,
} from "./session-store/index.js";
