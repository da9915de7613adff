export type { KeyRotationReport } from "../encryption/data-keys.js";
export type { EncryptionOptions } from "../encryption/encryption-options.js";
export type { KeyProvider, KeyWrapContext, WrappedDataKey } from "../encryption/key-provider.js";
export { agentSessionsOf, openAgentSession, registerAgentSession } from "./agent-sessions.js";
export {
  type ApiKeyRecord,
  type ApiKeyRecordStore,
  type ApiKeys,
  type ApiKeysOptions,
  createApiKeys,
  createMemoryApiKeyRecordStore,
  type IssuedApiKey,
  type VerifiedApiKey,
} from "./api-keys.js";
export type { DeletionAudit, DeletionAuditListOptions, DeletionAuditPage } from "./deletion-audit.js";
export type { DeletionAuditInput, DeletionAuditRow } from "./deletion-audit-rows.js";
export { ownerOf } from "./owner.js";
export type { RegisteredSessions, RegistrationState, SessionTrashMark } from "./registered-sessions.js";
export {
  SESSION_ACTIVITY_PREFIX,
  type SessionActivity,
  type SessionActivityEntry,
  type SessionActivityKind,
  type SessionActivityLog,
  sessionActivityOf,
} from "./session-activity.js";
export { SHARED_LAYOUT } from "./shared-layout.js";
export { createSharedStores, type SharedStores } from "./shared-stores.js";
