// Generated from drizzle/ by `pnpm db:embed` (scripts/embed-migrations.ts). Do not edit.
import type { EmbeddedMigration } from "./embedded-migration.js";

/** Stowage's migrations in journal order, embedded so that a bundled application can apply them. */
export const EMBEDDED_MIGRATIONS: readonly EmbeddedMigration[] = [
  {
    tag: "0000_initial",
    folderMillis: 1795296523252,
    hash: "3872fac62999c61e03bb5e7e4213c2921a8bca904a68bc3a4761eae16ef0612f",
    bps: true,
    sql: [
      'CREATE TABLE "agent_sessions" (\n\t"id" serial PRIMARY KEY NOT NULL,\n\t"request_id" text NOT NULL,\n\t"session_id" text NOT NULL,\n\t"agent_type" text NOT NULL,\n\t"session_blob" "bytea" NOT NULL,\n\t"blob_size_bytes" integer NOT NULL,\n\t"codec" text NOT NULL,\n\t"raw_size_bytes" integer NOT NULL,\n\t"created_at" timestamp with time zone DEFAULT now() NOT NULL,\n\t"expires_at" timestamp with time zone,\n\tCONSTRAINT "agent_sessions_request_id_session_id_unique" UNIQUE("request_id","session_id"),\n\tCONSTRAINT "agent_sessions_codec_check" CHECK ("agent_sessions"."codec" IN (\'gzip\', \'brotli\', \'zstd\')),\n\tCONSTRAINT "agent_sessions_sizes_check" CHECK ("agent_sessions"."blob_size_bytes" >= 0 AND "agent_sessions"."raw_size_bytes" >= 0)\n);\n',
      '\nCREATE TABLE "blobs" (\n\t"namespace" text COLLATE "C" NOT NULL,\n\t"key" text COLLATE "C" NOT NULL,\n\t"body" "bytea" NOT NULL,\n\t"size" integer NOT NULL,\n\t"content_type" text,\n\t"last_modified" timestamp with time zone DEFAULT now() NOT NULL,\n\tCONSTRAINT "blobs_pkey" PRIMARY KEY("namespace","key")\n);\n',
      '\nCREATE TABLE "session_store_entries" (\n\t"id" bigserial PRIMARY KEY NOT NULL,\n\t"project_key" text COLLATE "C" NOT NULL,\n\t"session_id" text COLLATE "C" NOT NULL,\n\t"subpath" text COLLATE "C" DEFAULT \'\' NOT NULL,\n\t"uuid" text,\n\t"entry" text NOT NULL\n);\n',
      '\nCREATE TABLE "session_store_keys" (\n\t"project_key" text COLLATE "C" NOT NULL,\n\t"session_id" text COLLATE "C" NOT NULL,\n\t"subpath" text COLLATE "C" DEFAULT \'\' NOT NULL,\n\t"mtime" bigint NOT NULL,\n\t"summary" text,\n\tCONSTRAINT "session_store_keys_pkey" PRIMARY KEY("project_key","session_id","subpath")\n);\n',
      '\nCREATE INDEX "idx_agent_sessions_request_id" ON "agent_sessions" USING btree ("request_id");',
      '\nCREATE INDEX "idx_agent_sessions_session_id" ON "agent_sessions" USING btree ("session_id");',
      '\nCREATE INDEX "idx_agent_sessions_expires_at" ON "agent_sessions" USING btree ("expires_at") WHERE "agent_sessions"."expires_at" IS NOT NULL;',
      '\nCREATE INDEX "idx_session_store_entries_key" ON "session_store_entries" USING btree ("project_key","session_id","subpath","id");',
      '\nCREATE UNIQUE INDEX "uq_session_store_entries_uuid" ON "session_store_entries" USING btree ("project_key","session_id","subpath","uuid") WHERE "session_store_entries"."uuid" IS NOT NULL;',
    ],
  },
  {
    tag: "0001_session_blob_owner",
    folderMillis: 1795399582457,
    hash: "f96c1de911aef052e416c5702dcf6ed571aa969c3436141054db0893d9bfd0ea",
    bps: true,
    sql: [
      'ALTER TABLE "agent_sessions" DROP CONSTRAINT "agent_sessions_request_id_session_id_unique";',
      '\nDROP INDEX "idx_agent_sessions_request_id";',
      '\nDROP INDEX "idx_agent_sessions_session_id";',
      "\n-- Rows stored before owners existed get the owner '' (hand-edited: drizzle-kit writes a bare\n-- NOT NULL column, which fails on a table with rows). '' is not a safe id, so no caller can name\n-- it: those sessions are unreachable until an operator assigns them an owner, and expire as usual.\nALTER TABLE \"agent_sessions\" ADD COLUMN \"owner\" text DEFAULT '' NOT NULL;",
      '\nALTER TABLE "agent_sessions" ALTER COLUMN "owner" DROP DEFAULT;',
      '\nCREATE INDEX "idx_agent_sessions_owner_request_id" ON "agent_sessions" USING btree ("owner","request_id");',
      '\nCREATE INDEX "idx_agent_sessions_owner_session_id" ON "agent_sessions" USING btree ("owner","session_id");',
      '\nALTER TABLE "agent_sessions" ADD CONSTRAINT "agent_sessions_owner_request_id_session_id_unique" UNIQUE("owner","request_id","session_id");',
    ],
  },
  {
    tag: "0002_quota_ledger",
    folderMillis: 1795399594149,
    hash: "e40c5c73305fbe0a151a13cde53094eabb53bae89948ef6520716dce2689df86",
    bps: true,
    sql: [
      'CREATE TABLE "quota_objects" (\n\t"scope" text COLLATE "C" NOT NULL,\n\t"key" text COLLATE "C" NOT NULL,\n\t"size" bigint NOT NULL,\n\tCONSTRAINT "quota_objects_pkey" PRIMARY KEY("scope","key"),\n\tCONSTRAINT "quota_objects_size_check" CHECK ("quota_objects"."size" >= 0)\n);\n',
      '\nCREATE TABLE "quota_reservations" (\n\t"scope" text COLLATE "C" NOT NULL,\n\t"key" text COLLATE "C" NOT NULL,\n\t"bytes" bigint NOT NULL,\n\t"issued_at" timestamp with time zone NOT NULL,\n\t"expires_at" timestamp with time zone NOT NULL,\n\t"holders" integer NOT NULL,\n\t"token" text NOT NULL,\n\tCONSTRAINT "quota_reservations_pkey" PRIMARY KEY("scope","key"),\n\tCONSTRAINT "quota_reservations_bytes_check" CHECK ("quota_reservations"."bytes" > 0 AND "quota_reservations"."holders" > 0)\n);\n',
      '\nCREATE TABLE "quota_scopes" (\n\t"scope" text COLLATE "C" PRIMARY KEY NOT NULL,\n\t"used_bytes" bigint DEFAULT 0 NOT NULL,\n\t"object_count" integer DEFAULT 0 NOT NULL,\n\tCONSTRAINT "quota_scopes_totals_check" CHECK ("quota_scopes"."used_bytes" >= 0 AND "quota_scopes"."object_count" >= 0)\n);\n',
      "\n-- Hand-written (drizzle-kit does not generate functions): the quota ledger's check-and-reserve in\n-- one round trip. The scope row's lock serializes every change to a scope; each statement after\n-- it runs with a fresh snapshot, so it sees every change committed before the lock was granted.\n-- Outcomes: 'unlisted' (no row yet: list the scope first), 'expired' (settle these keys first),\n-- 'exceeded' (the request does not fit) or 'granted'. A key's new size replaces what it holds or\n-- has reserved, never adds to it.\nCREATE FUNCTION \"stowage_quota_reserve\"(\n\tp_scope text, p_key text, p_bytes bigint, p_limit bigint, p_expires_at timestamptz, p_token text\n) RETURNS TABLE (\n\t\"outcome\" text, \"used\" bigint, \"pending\" bigint, \"objects\" integer, \"uploads\" integer,\n\t\"expired\" text[], \"granted_token\" text\n) LANGUAGE plpgsql AS $$\nDECLARE\n\tv_size bigint;\n\tv_reserved bigint;\n\tv_before bigint;\n\tv_after bigint;\nBEGIN\n\tSELECT s.used_bytes, s.object_count INTO used, objects\n\t\tFROM quota_scopes s WHERE s.scope = p_scope FOR UPDATE;\n\tIF NOT FOUND THEN\n\t\toutcome := 'unlisted';\n\t\tRETURN NEXT;\n\t\tRETURN;\n\tEND IF;\n\tSELECT coalesce(sum(greatest(r.bytes - coalesce(o.size, 0), 0)), 0), count(*),\n\t\tarray_agg(r.key) FILTER (WHERE r.expires_at <= now()),\n\t\tmax(r.bytes) FILTER (WHERE r.key = p_key),\n\t\t(SELECT k.size FROM quota_objects k WHERE k.scope = p_scope AND k.key = p_key)\n\t\tINTO pending, uploads, expired, v_reserved, v_size\n\t\tFROM quota_reservations r\n\t\tLEFT JOIN quota_objects o ON o.scope = r.scope AND o.key = r.key\n\t\tWHERE r.scope = p_scope;\n\tIF expired IS NOT NULL THEN\n\t\toutcome := 'expired';\n\t\tRETURN NEXT;\n\t\tRETURN;\n\tEND IF;\n\t-- What the key adds to the pending total now, and with this reservation.\n\tv_before := greatest(coalesce(v_reserved, 0) - coalesce(v_size, 0), 0);\n\tv_after := greatest(greatest(coalesce(v_reserved, 0), p_bytes) - coalesce(v_size, 0), 0);\n\tIF used + pending - v_before + v_after > p_limit THEN\n\t\toutcome := 'exceeded';\n\t\tRETURN NEXT;\n\t\tRETURN;\n\tEND IF;\n\tIF v_reserved IS NOT NULL THEN\n\t\t-- One reservation per key: the largest size, held until the last URL expires.\n\t\tUPDATE quota_reservations r SET\n\t\t\tbytes = greatest(r.bytes, p_bytes),\n\t\t\tissued_at = CASE WHEN p_bytes > r.bytes THEN now() ELSE r.issued_at END,\n\t\t\texpires_at = greatest(r.expires_at, p_expires_at),\n\t\t\tholders = r.holders + 1\n\t\t\tWHERE r.scope = p_scope AND r.key = p_key;\n\tELSIF p_bytes > 0 THEN\n\t\tINSERT INTO quota_reservations (scope, key, bytes, issued_at, expires_at, holders, token)\n\t\t\tVALUES (p_scope, p_key, p_bytes, now(), p_expires_at, 1, p_token);\n\t\tuploads := uploads + 1;\n\t\tgranted_token := p_token;\n\tEND IF;\n\tpending := pending - v_before + v_after;\n\toutcome := 'granted';\n\tRETURN NEXT;\nEND\n$$;\n",
    ],
  },
  {
    tag: "0003_rate_limits",
    folderMillis: 1795402879401,
    hash: "cdcefb516e626eb2ce8f3841a5bb816eb270b14b5a1dd791dfc5fd12fd099a10",
    bps: true,
    sql: [
      'CREATE TABLE "rate_limits" (\n\t"key" text COLLATE "C" PRIMARY KEY NOT NULL,\n\t"points" integer DEFAULT 0 NOT NULL,\n\t"expire" timestamp with time zone\n);\n',
      '\nCREATE INDEX "idx_rate_limits_expire" ON "rate_limits" USING btree ("expire");',
    ],
  },
  {
    tag: "0004_quota_listing_times",
    folderMillis: 1795403654475,
    hash: "8af6358a888988c5a629470b63fc14c553d0dd26fffc80836649e82ca198b5c9",
    bps: true,
    sql: [
      '-- The quota ledger\'s listing times (generated by drizzle-kit from src/schema.ts). A row of\n-- quota_objects records when a commit, forget or HEAD last set it (changed_at, the database\'s\n-- clock); a forgotten key keeps a row with size NULL until a later listing supersedes it, so a\n-- listing that ran while a key changed cannot undo the change. quota_scopes.listed_at is when the\n-- latest applied listing started: an older listing changes nothing.\nALTER TABLE "quota_objects" ALTER COLUMN "size" DROP NOT NULL;',
      '\nALTER TABLE "quota_objects" ADD COLUMN "changed_at" timestamp with time zone;',
      '\nALTER TABLE "quota_scopes" ADD COLUMN "listed_at" timestamp with time zone;',
      '\nALTER TABLE "quota_objects" ADD CONSTRAINT "quota_objects_recorded_check" CHECK ("quota_objects"."size" IS NOT NULL OR "quota_objects"."changed_at" IS NOT NULL);',
    ],
  },
  {
    tag: "0005_prompt_metrics",
    folderMillis: 1795406853041,
    hash: "9c207fb4927708be8757bc686836e138e91ce11c885b9c89c6a666b82b4a73e1",
    bps: true,
    sql: [
      '-- Hot-state prompt metrics (generated by drizzle-kit from src/schema.ts): one row per model call\n-- of a session, turns from 1 without gaps; the primary key makes the second writer of a turn fail\n-- so it takes the next one. `entry` is the record with its warnings and violations (JSON text).\nCREATE TABLE "prompt_metrics" (\n\t"namespace" text COLLATE "C" NOT NULL,\n\t"session_id" text COLLATE "C" NOT NULL,\n\t"turn" bigint NOT NULL,\n\t"recorded_at" timestamp with time zone NOT NULL,\n\t"hot_state_version" bigint,\n\t"hs_tokens" integer NOT NULL,\n\t"est_tokens" integer,\n\t"budget_ok" boolean NOT NULL,\n\t"entry" text NOT NULL,\n\tCONSTRAINT "prompt_metrics_pkey" PRIMARY KEY("namespace","session_id","turn"),\n\tCONSTRAINT "prompt_metrics_turn_check" CHECK ("prompt_metrics"."turn" >= 1)\n);\n',
    ],
  },
  {
    tag: "0006_session_entries_lz4",
    folderMillis: 1795711439472,
    hash: "fd1bbb73405ad987feb9d76777fa9c430b8f2c806a8a1b4cd8f0e866190a511c",
    bps: true,
    sql: [
      '-- SessionStore entries are compressed with lz4 instead of the default pglz (hand-written; the\n-- schema cannot say it). Most entries are over the 2 KB at which PostgreSQL compresses a value, and\n-- pglz was most of what an append cost the server: 50,000 entries appended in batches of 100 took\n-- 4.56 s with pglz and 3.38 s with lz4, whose ratio is only a little lower. Values stored before\n-- stay as they are. A server built without lz4 (PGlite is one) keeps pglz.\nDO $$\nBEGIN\n  ALTER TABLE "session_store_entries" ALTER COLUMN "entry" SET COMPRESSION lz4;\nEXCEPTION WHEN feature_not_supported THEN\n  NULL;\nEND $$;\n',
    ],
  },
  {
    tag: "0007_quota_reservations_outlive_commit",
    folderMillis: 1795733408109,
    hash: "d4757db36cdd433b927687f3c8b9aef1e917c32713bfd11fda0cca2ac2b7b18e",
    bps: true,
    sql: [
      '-- A reservation outlives commits and deletions until its key\'s last URL expires (hand-written: a\n-- function body). The ledger no longer deletes a reservation on commit, so `uploads` counts only\n-- the reservations that still hold bytes beyond what their key holds, as the `usage` figures do:\n-- a committed upload whose URL is still valid is not pending. Nothing else changes.\nCREATE OR REPLACE FUNCTION "stowage_quota_reserve"(\n\tp_scope text, p_key text, p_bytes bigint, p_limit bigint, p_expires_at timestamptz, p_token text\n) RETURNS TABLE (\n\t"outcome" text, "used" bigint, "pending" bigint, "objects" integer, "uploads" integer,\n\t"expired" text[], "granted_token" text\n) LANGUAGE plpgsql AS $$\nDECLARE\n\tv_size bigint;\n\tv_reserved bigint;\n\tv_before bigint;\n\tv_after bigint;\nBEGIN\n\tSELECT s.used_bytes, s.object_count INTO used, objects\n\t\tFROM quota_scopes s WHERE s.scope = p_scope FOR UPDATE;\n\tIF NOT FOUND THEN\n\t\toutcome := \'unlisted\';\n\t\tRETURN NEXT;\n\t\tRETURN;\n\tEND IF;\n\tSELECT coalesce(sum(greatest(r.bytes - coalesce(o.size, 0), 0)), 0),\n\t\tcount(*) FILTER (WHERE r.bytes > coalesce(o.size, 0)),\n\t\tarray_agg(r.key) FILTER (WHERE r.expires_at <= now()),\n\t\tmax(r.bytes) FILTER (WHERE r.key = p_key),\n\t\t(SELECT k.size FROM quota_objects k WHERE k.scope = p_scope AND k.key = p_key)\n\t\tINTO pending, uploads, expired, v_reserved, v_size\n\t\tFROM quota_reservations r\n\t\tLEFT JOIN quota_objects o ON o.scope = r.scope AND o.key = r.key\n\t\tWHERE r.scope = p_scope;\n\tIF expired IS NOT NULL THEN\n\t\toutcome := \'expired\';\n\t\tRETURN NEXT;\n\t\tRETURN;\n\tEND IF;\n\t-- What the key adds to the pending total now, and with this reservation.\n\tv_before := greatest(coalesce(v_reserved, 0) - coalesce(v_size, 0), 0);\n\tv_after := greatest(greatest(coalesce(v_reserved, 0), p_bytes) - coalesce(v_size, 0), 0);\n\tIF used + pending - v_before + v_after > p_limit THEN\n\t\toutcome := \'exceeded\';\n\t\tRETURN NEXT;\n\t\tRETURN;\n\tEND IF;\n\tIF v_reserved IS NOT NULL THEN\n\t\t-- One reservation per key: the largest size, held until the last URL expires.\n\t\tUPDATE quota_reservations r SET\n\t\t\tbytes = greatest(r.bytes, p_bytes),\n\t\t\tissued_at = CASE WHEN p_bytes > r.bytes THEN now() ELSE r.issued_at END,\n\t\t\texpires_at = greatest(r.expires_at, p_expires_at),\n\t\t\tholders = r.holders + 1\n\t\t\tWHERE r.scope = p_scope AND r.key = p_key;\n\tELSIF p_bytes > 0 THEN\n\t\tINSERT INTO quota_reservations (scope, key, bytes, issued_at, expires_at, holders, token)\n\t\t\tVALUES (p_scope, p_key, p_bytes, now(), p_expires_at, 1, p_token);\n\t\tgranted_token := p_token;\n\tEND IF;\n\tpending := pending - v_before + v_after;\n\tuploads := uploads - (v_before > 0)::integer + (v_after > 0)::integer;\n\toutcome := \'granted\';\n\tRETURN NEXT;\nEND\n$$;\n',
    ],
  },
  {
    tag: "0008_quota_revocations",
    folderMillis: 1795899738118,
    hash: "66340107448ec2676121bf773928cf66e1a80c5730975f31ffeed778214dda93",
    bps: true,
    sql: [
      '-- How many times a scope\'s upload URLs were revoked (generated by drizzle-kit from src/schema.ts).\n-- Deleting a session\'s uploads revokes its outstanding URLs: the ledger ends every reservation of\n-- the scope and counts one more revocation under the scope\'s row lock, and the upload service\n-- compares the count before and after handing out a URL, so a URL signed while the session was\n-- deleted is never handed out.\nALTER TABLE "quota_scopes" ADD COLUMN "revocations" integer DEFAULT 0 NOT NULL;\n',
    ],
  },
  {
    tag: "0009_agent_sessions_comments",
    folderMillis: 1795922052087,
    hash: "e202f28fc679540c5f3f42ee307d36f020a2c1c9c87b661fa77811d462c9068b",
    bps: true,
    sql: [
      "-- Document 002's own comments on its table, word for word (the codec column says when a blob is\n-- brotli or zstd rather than gzip; \"Claude SDK\" is the document's name for every agent's session id).\nCOMMENT ON TABLE agent_sessions IS 'Persisted agent session data for ephemeral container resumption';",
      "\nCOMMENT ON COLUMN agent_sessions.session_id IS 'Claude SDK session ID returned from query()';",
      "\nCOMMENT ON COLUMN agent_sessions.session_blob IS 'Gzipped JSONL session file';",
      "\nCOMMENT ON COLUMN agent_sessions.expires_at IS 'Session expiry for cleanup (SDK sessions expire ~24h, we keep 7 days)';\n",
    ],
  },
  {
    tag: "0010_session_blob_stored_bytes",
    folderMillis: 1795922181700,
    hash: "dea1c28e6dbf7cdc71f73ef209df18516ba5e6467043904bd7bacede3f0bb97d",
    bps: true,
    sql: ['ALTER TABLE "agent_sessions" ADD COLUMN "stored_bytes" integer;'],
  },
  {
    tag: "0011_langgraph_checkpoints",
    folderMillis: 1795923750064,
    hash: "858a0d443d0b08f25de241f25032ab327ff6e21055aecef914c986799b91d7ec",
    bps: true,
    sql: [
      'CREATE TABLE "langgraph_checkpoints" (\n\t"namespace" text COLLATE "C" NOT NULL,\n\t"thread_id" text COLLATE "C" NOT NULL,\n\t"checkpoint_ns" text COLLATE "C" NOT NULL,\n\t"checkpoint_id" text COLLATE "C" NOT NULL,\n\t"parent_id" text,\n\t"checkpoint" "bytea" NOT NULL,\n\t"metadata" "bytea" NOT NULL,\n\t"versions" text NOT NULL,\n\tCONSTRAINT "langgraph_checkpoints_pkey" PRIMARY KEY("namespace","thread_id","checkpoint_ns","checkpoint_id")\n);\n',
      '\nCREATE TABLE "langgraph_values" (\n\t"namespace" text COLLATE "C" NOT NULL,\n\t"thread_id" text COLLATE "C" NOT NULL,\n\t"checkpoint_ns" text COLLATE "C" NOT NULL,\n\t"channel" text COLLATE "C" NOT NULL,\n\t"version" text COLLATE "C" NOT NULL,\n\t"type" text NOT NULL,\n\t"value" "bytea" NOT NULL,\n\tCONSTRAINT "langgraph_values_pkey" PRIMARY KEY("namespace","thread_id","checkpoint_ns","channel","version")\n);\n',
      '\nCREATE TABLE "langgraph_writes" (\n\t"namespace" text COLLATE "C" NOT NULL,\n\t"thread_id" text COLLATE "C" NOT NULL,\n\t"checkpoint_ns" text COLLATE "C" NOT NULL,\n\t"checkpoint_id" text COLLATE "C" NOT NULL,\n\t"task_id" text COLLATE "C" NOT NULL,\n\t"idx" integer NOT NULL,\n\t"task_path" text NOT NULL,\n\t"channel" text NOT NULL,\n\t"type" text NOT NULL,\n\t"value" "bytea" NOT NULL,\n\tCONSTRAINT "langgraph_writes_pkey" PRIMARY KEY("namespace","thread_id","checkpoint_ns","checkpoint_id","task_id","idx")\n);\n',
    ],
  },
  {
    tag: "0012_session_blob_trashed_by",
    folderMillis: 1796003717314,
    hash: "0f09d09e135590436e8dc94b6cf24134fabdb1a756c22806a642c013a0109c95",
    bps: true,
    sql: ['ALTER TABLE "agent_sessions" ADD COLUMN "trashed_by" text;'],
  },
  {
    tag: "0013_session_store_trash",
    folderMillis: 1796013822940,
    hash: "01e1526c603be5b075f9b351b345288e6d0c8debeb7d5501a2c02bdc038d8b86",
    bps: true,
    sql: [
      'CREATE TABLE "session_store_trash" (\n\t"trash_id" text PRIMARY KEY NOT NULL,\n\t"project_key" text COLLATE "C" NOT NULL,\n\t"session_id" text COLLATE "C" NOT NULL,\n\t"subpath" text COLLATE "C" NOT NULL,\n\t"trashed_at" timestamp with time zone NOT NULL,\n\t"purge_after" timestamp with time zone NOT NULL,\n\t"bytes" bigint NOT NULL\n);\n',
      '\nCREATE TABLE "session_store_trash_entries" (\n\t"trash_id" text NOT NULL,\n\t"id" bigint NOT NULL,\n\t"project_key" text COLLATE "C" NOT NULL,\n\t"session_id" text COLLATE "C" NOT NULL,\n\t"subpath" text COLLATE "C" NOT NULL,\n\t"uuid" text,\n\t"entry" text NOT NULL,\n\tCONSTRAINT "session_store_trash_entries_pkey" PRIMARY KEY("trash_id","id")\n);\n',
      '\nCREATE TABLE "session_store_trash_keys" (\n\t"trash_id" text NOT NULL,\n\t"project_key" text COLLATE "C" NOT NULL,\n\t"session_id" text COLLATE "C" NOT NULL,\n\t"subpath" text COLLATE "C" NOT NULL,\n\t"mtime" bigint NOT NULL,\n\t"summary" text,\n\tCONSTRAINT "session_store_trash_keys_pkey" PRIMARY KEY("trash_id","subpath")\n);\n',
      '\nCREATE INDEX "idx_session_store_trash_project" ON "session_store_trash" USING btree ("project_key","trashed_at");',
      '\nCREATE INDEX "idx_session_store_trash_purge_after" ON "session_store_trash" USING btree ("purge_after");',
    ],
  },
];
