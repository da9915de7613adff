import { sql } from "drizzle-orm";
import {
  bigint,
  bigserial,
  boolean,
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
 * Captured agent sessions (one archive per owner, request and session), kept until `expires_at`.
 * A host application may add a foreign key from `request_id` to its own requests table in its
 * own migration; Stowage does not force one. Rows stored before owners existed have the owner
 * `''`, which no caller can name (see the README).
 */
export const agentSessions = pgTable(
  "agent_sessions",
  {
    id: serial("id").primaryKey(),
    owner: text("owner").notNull(),
    requestId: text("request_id").notNull(),
    sessionId: text("session_id").notNull(),
    agentType: text("agent_type").notNull(),
    sessionBlob: bytea("session_blob").notNull(),
    blobSizeBytes: integer("blob_size_bytes").notNull(),
    codec: text("codec").notNull(),
    rawSizeBytes: integer("raw_size_bytes").notNull(),
    // What storing the row added (a capture kept as chunks: its new chunks and the blob); null on
    // rows stored before it was recorded, read as the blob's size.
    storedBytes: integer("stored_bytes"),
    createdAt: timestamp("created_at", { withTimezone: true }).defaultNow().notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }),
    // Who deleted the row before its time (expired then, into the trash); null when it is live or
    // its TTL expired it.
    trashedBy: text("trashed_by"),
  },
  (table) => [
    unique("agent_sessions_owner_request_id_session_id_unique").on(
      table.owner,
      table.requestId,
      table.sessionId,
    ),
    index("idx_agent_sessions_owner_request_id").on(table.owner, table.requestId),
    // getBySessionId looks an owner's sessions up without a request id.
    index("idx_agent_sessions_owner_session_id").on(table.owner, table.sessionId),
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

/**
 * Claude Agent SDK SessionStore: transcripts a `delete` moved to the trash, one row each, until a
 * restore moves them back or a purge (`purge_after` passed, or asked for) deletes them. Their key
 * rows and entries wait in the two tables below, deleted in the same transaction as this row (no
 * foreign key: drizzle would write it schema-qualified, and a deployment may use its own schema).
 */
export const sessionStoreTrash = pgTable(
  "session_store_trash",
  {
    trashId: text("trash_id").primaryKey(),
    projectKey: textC("project_key").notNull(),
    sessionId: textC("session_id").notNull(),
    /** `''` when the main transcript went, its subkeys with it. */
    subpath: textC("subpath").notNull(),
    trashedAt: timestamp("trashed_at", { withTimezone: true, mode: "date" }).notNull(),
    purgeAfter: timestamp("purge_after", { withTimezone: true, mode: "date" }).notNull(),
    bytes: bigint("bytes", { mode: "number" }).notNull(),
  },
  (table) => [
    index("idx_session_store_trash_project").on(table.projectKey, table.trashedAt),
    index("idx_session_store_trash_purge_after").on(table.purgeAfter),
  ],
);

/** The key rows of a trashed transcript, as they were. */
export const sessionStoreTrashKeys = pgTable(
  "session_store_trash_keys",
  {
    trashId: text("trash_id").notNull(),
    projectKey: textC("project_key").notNull(),
    sessionId: textC("session_id").notNull(),
    subpath: textC("subpath").notNull(),
    mtime: bigint("mtime", { mode: "number" }).notNull(),
    summary: text("summary"),
  },
  (table) => [
    primaryKey({
      name: "session_store_trash_keys_pkey",
      columns: [table.trashId, table.subpath],
    }),
  ],
);

/** The entries of a trashed transcript, with their ids (their order) as they were. */
export const sessionStoreTrashEntries = pgTable(
  "session_store_trash_entries",
  {
    trashId: text("trash_id").notNull(),
    id: bigint("id", { mode: "number" }).notNull(),
    projectKey: textC("project_key").notNull(),
    sessionId: textC("session_id").notNull(),
    subpath: textC("subpath").notNull(),
    uuid: text("uuid"),
    entry: text("entry").notNull(),
  },
  (table) => [
    primaryKey({
      name: "session_store_trash_entries_pkey",
      columns: [table.trashId, table.id],
    }),
  ],
);

/**
 * The quota ledger: one row per scope (an upload session's prefix) with the bytes and number of
 * the objects under it. Every change to a scope, its objects or its reservations first locks
 * this row, so changes to one scope are serialized across connections and processes.
 * `listed_at`: when the latest listing applied to the scope started (the caller's clock); a
 * listing that started before it changes nothing. `revocations`: how many times the scope's
 * upload URLs were revoked (its uploads deleted); the upload service compares it before and
 * after handing out a URL.
 */
export const quotaScopes = pgTable(
  "quota_scopes",
  {
    scope: textC("scope").primaryKey(),
    usedBytes: bigint("used_bytes", { mode: "number" }).notNull().default(0),
    objectCount: integer("object_count").notNull().default(0),
    listedAt: timestamp("listed_at", { withTimezone: true }),
    revocations: integer("revocations").notNull().default(0),
  },
  (table) => [check("quota_scopes_totals_check", sql`${table.usedBytes} >= 0 AND ${table.objectCount} >= 0`)],
);

/**
 * The quota ledger's view of the objects under a scope: what each key holds. `changed_at` is when
 * a commit, a forget or a HEAD last recorded the key (the database's clock; NULL when only a
 * listing did): a listing that started before it keeps the record. A forgotten key is a row with
 * `size` NULL until a later listing supersedes it.
 */
export const quotaObjects = pgTable(
  "quota_objects",
  {
    scope: textC("scope").notNull(),
    key: textC("key").notNull(),
    size: bigint("size", { mode: "number" }),
    changedAt: timestamp("changed_at", { withTimezone: true }),
  },
  (table) => [
    primaryKey({ name: "quota_objects_pkey", columns: [table.scope, table.key] }),
    check("quota_objects_size_check", sql`${table.size} >= 0`),
    check("quota_objects_recorded_check", sql`${table.size} IS NOT NULL OR ${table.changedAt} IS NOT NULL`),
  ],
);

/**
 * Bytes reserved for upload URLs not yet settled: one row per key (the largest outstanding size,
 * held until the last URL's expiry plus grace; `holders` URLs stand behind it). `token` names the
 * reservation a single URL may give back.
 */
export const quotaReservations = pgTable(
  "quota_reservations",
  {
    scope: textC("scope").notNull(),
    key: textC("key").notNull(),
    bytes: bigint("bytes", { mode: "number" }).notNull(),
    issuedAt: timestamp("issued_at", { withTimezone: true }).notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    holders: integer("holders").notNull(),
    token: text("token").notNull(),
  },
  (table) => [
    primaryKey({ name: "quota_reservations_pkey", columns: [table.scope, table.key] }),
    check("quota_reservations_bytes_check", sql`${table.bytes} > 0 AND ${table.holders} > 0`),
  ],
);

/**
 * Rate-limit buckets shared by every process on the database: the table shape
 * `rate-limiter-flexible`'s `RateLimiterDrizzle` reads and writes (`key`, `points`, `expire`), so
 * an app keeps one maintained limiter and gets limits that hold across replicas.
 */
export const rateLimits = pgTable(
  "rate_limits",
  {
    key: textC("key").primaryKey(),
    points: integer("points").notNull().default(0),
    expire: timestamp("expire", { withTimezone: true }),
  },
  (table) => [index("idx_rate_limits_expire").on(table.expire)],
);

/**
 * Hot-state prompt metrics (`@stowage/hot-state`'s metrics log): one row per model call of a
 * session, turns from 1 without gaps (the primary key makes two writers of one turn fail). `entry`
 * holds the record, its warnings and violations as JSON text; the measures a dashboard queries
 * are columns too.
 */
export const promptMetrics = pgTable(
  "prompt_metrics",
  {
    namespace: textC("namespace").notNull(),
    sessionId: textC("session_id").notNull(),
    turn: bigint("turn", { mode: "number" }).notNull(),
    recordedAt: timestamp("recorded_at", { withTimezone: true }).notNull(),
    hotStateVersion: bigint("hot_state_version", { mode: "number" }),
    hsTokens: integer("hs_tokens").notNull(),
    estTokens: integer("est_tokens"),
    budgetOk: boolean("budget_ok").notNull(),
    entry: text("entry").notNull(),
  },
  (table) => [
    primaryKey({ name: "prompt_metrics_pkey", columns: [table.namespace, table.sessionId, table.turn] }),
    check("prompt_metrics_turn_check", sql`${table.turn} >= 1`),
  ],
);

/**
 * LangGraph checkpoints (`@stowage/storage-postgres/langgraph`): one row per checkpoint of a
 * thread and namespace, its channel values apart (`langgraph_values`, each once per channel and
 * version) and its pending writes apart (`langgraph_writes`). `namespace` keeps savers apart (a
 * principal, a deployment); checkpoint ids sort byte by byte, so the newest is the greatest.
 */
export const langgraphCheckpoints = pgTable(
  "langgraph_checkpoints",
  {
    namespace: textC("namespace").notNull(),
    threadId: textC("thread_id").notNull(),
    checkpointNs: textC("checkpoint_ns").notNull(),
    checkpointId: textC("checkpoint_id").notNull(),
    parentId: text("parent_id"),
    checkpoint: bytea("checkpoint").notNull(),
    metadata: bytea("metadata").notNull(),
    // The checkpoint's channel versions, [[channel, version], …]: the values it reads.
    versions: text("versions").notNull(),
  },
  (table) => [
    primaryKey({
      name: "langgraph_checkpoints_pkey",
      columns: [table.namespace, table.threadId, table.checkpointNs, table.checkpointId],
    }),
  ],
);

/** A LangGraph channel value, once per channel and version: what checkpoints read. */
export const langgraphValues = pgTable(
  "langgraph_values",
  {
    namespace: textC("namespace").notNull(),
    threadId: textC("thread_id").notNull(),
    checkpointNs: textC("checkpoint_ns").notNull(),
    channel: textC("channel").notNull(),
    version: textC("version").notNull(),
    type: text("type").notNull(),
    value: bytea("value").notNull(),
  },
  (table) => [
    primaryKey({
      name: "langgraph_values_pkey",
      columns: [table.namespace, table.threadId, table.checkpointNs, table.channel, table.version],
    }),
  ],
);

/** A pending write of a LangGraph checkpoint: one per task and index. */
export const langgraphWrites = pgTable(
  "langgraph_writes",
  {
    namespace: textC("namespace").notNull(),
    threadId: textC("thread_id").notNull(),
    checkpointNs: textC("checkpoint_ns").notNull(),
    checkpointId: textC("checkpoint_id").notNull(),
    taskId: textC("task_id").notNull(),
    idx: integer("idx").notNull(),
    taskPath: text("task_path").notNull(),
    channel: text("channel").notNull(),
    type: text("type").notNull(),
    value: bytea("value").notNull(),
  },
  (table) => [
    primaryKey({
      name: "langgraph_writes_pkey",
      columns: [
        table.namespace,
        table.threadId,
        table.checkpointNs,
        table.checkpointId,
        table.taskId,
        table.idx,
      ],
    }),
  ],
);
