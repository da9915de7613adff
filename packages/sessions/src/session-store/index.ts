export { encodeJsonLines } from "./json-lines.js";
export {
  createObjectSessionStore,
  DEFAULT_COMPACT_AFTER_PARTS,
  DEFAULT_SESSION_STORE_PREFIX,
  MAX_SESSION_STORE_PREFIX_BYTES,
  type ObjectSessionStore,
  type ObjectSessionStoreOptions,
} from "./object-session-store.js";
export {
  assertSessionStoreProjectKey,
  describeSessionKey,
  entryUuidProblem,
  MAX_APPEND_BYTES,
  MAX_APPEND_ENTRIES,
  MAX_ENTRY_BYTES,
  MAX_ENTRY_UUID_LENGTH,
  MAX_PROJECT_KEY_LENGTH,
  MAX_SUBPATH_BYTES,
  parseStoredEntry,
  parseStoredSummary,
  type SerializedEntry,
  type StoredSessionKey,
  serializeEntries,
  toSessionScope,
  toStoredSessionKey,
} from "./session-store-key.js";
export { assertAgentSdkInstalled, loadSummaryFold } from "./summary-fold.js";
export type {
  CompleteSessionStore,
  SessionKey,
  SessionStoreEntry,
  SessionSummaryEntry,
  StoreOperationOptions,
} from "./types.js";
