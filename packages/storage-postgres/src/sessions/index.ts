// `@stowage/storage-postgres/sessions`: `@stowage/sessions`' contracts on PostgreSQL, the session
// blob repository and the Claude Agent SDK's SessionStore. Needs `@stowage/sessions` installed
// (an optional peer of this package); the SessionStore needs the Agent SDK too.
export { createPostgresSessionBlobs, type PostgresSessionBlobsOptions } from "./session-blobs.js";
export {
  createPostgresSessionStore,
  type PostgresSessionStore,
  type PostgresSessionStoreOptions,
} from "./session-store.js";
export { type ScanSessionStoreOptions, scanSessionStoreForBlobRefs } from "./session-store-blob-refs.js";
