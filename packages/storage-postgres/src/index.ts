// The root entry: connecting (pg or embedded PGlite, migrations applied), the ObjectStore, core's
// Notifier over LISTEN/NOTIFY and the `rate_limits` table. It loads no domain package: the session
// blobs and the Agent SDK SessionStore are `./sessions`, the quota ledger `./uploads`, hot-state's
// metrics log `./metrics`, each with its domain package as an optional peer; the settings reader
// is `./env`. Limits and defaults are in the README, not exported.
export { type ConnectEmbeddedOptions, connectEmbedded } from "./connect-embedded.js";
export { type ConnectPostgresOptions, connectPostgres } from "./connect-postgres.js";
export type { DataDirHolder } from "./data-dir-lock.js";
export type { StowageConnection, StowageDatabase } from "./database.js";
export { type MigrateStowageOptions, migrateStowage } from "./migrate-stowage.js";
export { createPostgresNotifier, type PostgresNotifierOptions } from "./notifier.js";
export { createPostgresObjectStore, type PostgresObjectStoreOptions } from "./object-store.js";
export { rateLimits } from "./schema.js";
