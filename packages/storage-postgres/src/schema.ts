import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  check,
  customType,
  index,
  integer,
  pgTable,
  primaryKey,
  serial,
  text,
  timestamp,
  unique,
  uniqueIndex,
} from "drizzle-orm/pg-core";

// drizzle-orm 0.45 has no bytea column. node-postgres returns a Buffer and PGlite a Uint8Array;
// both are Uint8Array, and both accept one as a parameter.
const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => "bytea",
});

// Keys compared byte by byte: listing order is UTF-8 byte order whatever the database's locale.
const textC = customType<{ data: string; driverData: string }>({
  dataType: () => 'text COLLATE "C"',
});

/**
 * Captured agent sessions (one archive per request and session), kept until `expires_at`.
 * A host application may add a foreign key from `request_id` to its own requests table in its
 * own migration; Stowage does not force one.
 */
export const agentSessions = pgTable(
  "agent_sessions",
  {
    id: serial("id").primaryKey(),
    requestId: text("request_id").notNull(),
    sessionId: text("session_id").notNull(),
    agentType: text("agent_type").notNull(),
    sessionBlob: bytea("session_blob").notNull(),
    blobSizeBytes: integer("blob_size_bytes").notNull(),
    codec: text("codec").notNull(),
    rawSizeBytes: integer("raw_size_bytes").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).defaultNow().notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }),
  },
  (table) => [
    unique("agent_sessions_request_id_session_id_unique").on(table.requestId, table.sessionId),
    index("idx_agent_sessions_request_id").on(table.requestId),
    // getBySessionId looks sessions up without a request id.
    index("idx_agent_sessions_session_id").on(table.sessionId),
    index("idx_agent_sessions_expires_at").on(table.expiresAt).where(sql`${table.expiresAt} IS NOT NULL`),
    check("agent_sessions_codec_check", sql`${table.codec} IN ('gzip', 'brotli', 'zstd')`),
    check("agent_sessions_sizes_check", sql`${table.blobSizeBytes} >= 0 AND ${table.rawSizeBytes} >= 0`),
  ],
);

/** The ObjectStore table: one row per key, keys scoped by a namespace (one store per namespace). */
export const blobs = pgTable(
  "blobs",
  {
    namespace: textC("namespace").notNull(),
    key: textC("key").notNull(),
    body: bytea("body").notNull(),
    size: integer("size").notNull(),
    contentType: text("content_type"),
    lastModified: timestamp("last_modified", { withTimezone: true }).defaultNow().notNull(),
  },
  (table) => [primaryKey({ name: "blobs_pkey", columns: [table.namespace, table.key] })],
);

/**
 * Claude Agent SDK SessionStore: one row per key (a main transcript has `subpath` `''`), with the
 * write time that `listSessions` reports and, for main transcripts, the folded summary.
 */
export const sessionStoreKeys = pgTable(
  "session_store_keys",
  {
    projectKey: textC("project_key").notNull(),
    sessionId: textC("session_id").notNull(),
    subpath: textC("subpath").notNull().default(""),
    mtime: bigint("mtime", { mode: "number" }).notNull(),
    summary: text("summary"),
  },
  (table) => [
    primaryKey({
      name: "session_store_keys_pkey",
      columns: [table.projectKey, table.sessionId, table.subpath],
    }),
  ],
);

/**
 * Claude Agent SDK SessionStore: transcript entries as JSON text (verbatim, and unlike jsonb it
 * accepts `\u0000`), in append order (`id`). `uuid` is the idempotency key where present.
 */
export const sessionStoreEntries = pgTable(
  "session_store_entries",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    projectKey: textC("project_key").notNull(),
    sessionId: textC("session_id").notNull(),
    subpath: textC("subpath").notNull().default(""),
    uuid: text("uuid"),
    entry: text("entry").notNull(),
  },
  (table) => [
    index("idx_session_store_entries_key").on(table.projectKey, table.sessionId, table.subpath, table.id),
    uniqueIndex("uq_session_store_entries_uuid")
      .on(table.projectKey, table.sessionId, table.subpath, table.uuid)
      .where(sql`${table.uuid} IS NOT NULL`),
  ],
);
