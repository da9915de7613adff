export type { BlobRootsOptions } from "./blob-roots.js";
export type { TenantAgentsSessions } from "./bound-agents-sessions.js";
export type { TenantSessionBlobs } from "./bound-session-blobs.js";
export type { TenantUploads } from "./bound-uploads.js";
export type { StowageGarbageCollectionOptions } from "./collect-garbage.js";
export {
  createStowage,
  type Stowage,
  type StowageOptions,
  type Tenant,
  type TenantBase,
} from "./create-stowage.js";
export { DEFAULT_STORES, type DefaultStores } from "./default-stores.js";
export type { SessionDeletionOptions, SessionDeletionReport } from "./delete-session.js";
export type { SessionBlobsDeletionReport } from "./delete-session-blobs.js";
export type { SessionUploadsDeletionReport } from "./delete-session-uploads.js";
export type { KeyRotationReport } from "./encryption/data-keys.js";
export type { EncryptionOptions } from "./encryption/encryption-options.js";
export type { KeyProvider, KeyWrapContext, WrappedDataKey } from "./encryption/key-provider.js";
export type { ExpiringKind, ExpiringThing } from "./expiring.js";
export {
  convertStoredTranscript,
  type StoredTranscript,
} from "./history/convert-stored-transcript.js";
export {
  type RequestHistory,
  type RequestHistoryOptions,
  type RequestHistorySources,
  requestHistory,
  type SkippedSession,
} from "./history/request-history.js";
export {
  type HistoryOptions,
  type SessionHistoryOptions,
  sessionHistory,
} from "./history/session-history.js";
export {
  isTranscriptInput,
  type TranscriptFile,
  type TranscriptFormat,
  transcriptFiles,
} from "./history/transcript-files.js";
export {
  type Deployment,
  defineStore,
  type OpenedStore,
  type RootsContext,
  type SessionDeletionContext,
  type StoreContext,
  type StoreDefinition,
  type StoreTable,
} from "./store-definition.js";
export type { SweepContext, SweepReport } from "./sweep.js";
export type { TrashedThing, TrashKind } from "./trash/trash-entries.js";
