export { type ConnectEmbeddedOptions, connectEmbedded } from "./connect-embedded.js";
export {
  type ConnectPostgresOptions,
  connectPostgres,
  DEFAULT_MAX_CONNECTIONS,
  MIGRATION_LOCK_KEY,
} from "./connect-postgres.js";
export {
  DEFAULT_SCHEMA,
  SCHEMA_NAME_PATTERN,
  STOWAGE_MIGRATIONS_FOLDER,
  type StowageConnection,
  type StowageDatabase,
} from "./database.js";
export { fromDatabaseError, sqlStateOf } from "./database-errors.js";
export {
  createPostgresObjectStore,
  DEFAULT_MAX_OBJECT_BYTES,
  DEFAULT_OBJECT_NAMESPACE,
  MAX_OBJECT_BYTES_LIMIT,
  type PostgresObjectStoreOptions,
} from "./object-store.js";
export { agentSessions, blobs, sessionStoreEntries, sessionStoreKeys } from "./schema.js";
export { createPostgresSessionBlobs, type PostgresSessionBlobsOptions } from "./session-blobs.js";
