export { type ConnectEmbeddedOptions, connectEmbedded } from "./connect-embedded.js";
export { type ConnectPostgresOptions, connectPostgres, DEFAULT_MAX_CONNECTIONS } from "./connect-postgres.js";
export type { DataDirHolder } from "./data-dir-lock.js";
export {
  DEFAULT_SCHEMA,
  STOWAGE_MIGRATIONS_FOLDER,
  type StowageConnection,
  type StowageDatabase,
} from "./database.js";
export { fromDatabaseError } from "./database-errors.js";
export {
  MIGRATION_LOCK_KEY,
  type MigrateStowageOptions,
  migrateStowage,
  STOWAGE_MIGRATIONS_TABLE,
} from "./migrate-stowage.js";
export { createPostgresNotifier, DEFAULT_NOTIFY_CHANNEL, type PostgresNotifierOptions } from "./notifier.js";
export {
  createPostgresObjectStore,
  DEFAULT_MAX_OBJECT_BYTES,
  DEFAULT_OBJECT_NAMESPACE,
  MAX_OBJECT_BYTES_LIMIT,
  type PostgresObjectStoreOptions,
} from "./object-store.js";
export { postgresOptionsFromEnv } from "./options-from-env.js";
export {
  createPostgresPromptMetricsLog,
  type PostgresPromptMetricsLogOptions,
} from "./prompt-metrics-log.js";
export {
  createPostgresQuotaLedger,
  DEFAULT_RESERVATION_GRACE_MS,
  type PostgresQuotaLedgerOptions,
} from "./quota-ledger.js";
export {
  agentSessions,
  blobs,
  promptMetrics,
  quotaObjects,
  quotaReservations,
  quotaScopes,
  rateLimits,
  sessionStoreEntries,
  sessionStoreKeys,
} from "./schema.js";
export { createPostgresSessionBlobs, type PostgresSessionBlobsOptions } from "./session-blobs.js";
