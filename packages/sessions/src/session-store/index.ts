export {
  type EntryPayloads,
  entryPayloadsFrom,
  moveEntryPayloads,
  parseStoredEntryLine,
  putBackEntryPayloads,
  type SessionStorePayloadOptions,
  type StoredEntryLine,
  storedEntryLine,
} from "./entry-payloads.js";
export { encodeJsonLines } from "./json-lines.js";
export {
  createObjectSessionStore,
  type ObjectSessionStore,
  type ObjectSessionStoreOptions,
} from "./object-session-store.js";
export {
  assertSessionStoreProjectKey,
  describeSessionKey,
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
  SessionStoreDeleteOptions,
  SessionStoreEntry,
  SessionStoreSeal,
  SessionStoreTrash,
  SessionSummaryEntry,
  StoreOperationOptions,
  TrashedTranscript,
} from "./types.js";
