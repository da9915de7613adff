export {
  MAX_APPEND_BYTES,
  MAX_APPEND_ENTRIES,
  MAX_ENTRY_BYTES,
  MAX_ENTRY_UUID_LENGTH,
  type StoreOperationOptions,
} from "@stowage/sessions";
export {
  createPostgresSessionStore,
  type PostgresSessionStore,
  type PostgresSessionStoreOptions,
} from "./session-store.js";
