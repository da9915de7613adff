export {
  MAX_APPEND_BYTES,
  MAX_APPEND_ENTRIES,
  MAX_ENTRY_BYTES,
  MAX_ENTRY_UUID_LENGTH,
  STORE_PROJECT_KEY_PATTERN,
} from "./session-key.js";
export {
  createPostgresSessionStore,
  type PostgresSessionStore,
  type StoreOperationOptions,
} from "./session-store.js";
