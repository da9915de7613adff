CREATE TABLE "agent_sessions" (
	"id" serial PRIMARY KEY NOT NULL,
	"request_id" text NOT NULL,
	"session_id" text NOT NULL,
	"agent_type" text NOT NULL,
	"session_blob" "bytea" NOT NULL,
	"blob_size_bytes" integer NOT NULL,
	"codec" text NOT NULL,
	"raw_size_bytes" integer NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone,
	CONSTRAINT "agent_sessions_request_id_session_id_unique" UNIQUE("request_id","session_id"),
	CONSTRAINT "agent_sessions_codec_check" CHECK ("agent_sessions"."codec" IN ('gzip', 'brotli', 'zstd')),
	CONSTRAINT "agent_sessions_sizes_check" CHECK ("agent_sessions"."blob_size_bytes" >= 0 AND "agent_sessions"."raw_size_bytes" >= 0)
);
--> statement-breakpoint
CREATE TABLE "blobs" (
	"namespace" text COLLATE "C" NOT NULL,
	"key" text COLLATE "C" NOT NULL,
	"body" "bytea" NOT NULL,
	"size" integer NOT NULL,
	"content_type" text,
	"last_modified" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "blobs_pkey" PRIMARY KEY("namespace","key")
);
--> statement-breakpoint
CREATE TABLE "session_store_entries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"project_key" text COLLATE "C" NOT NULL,
	"session_id" text COLLATE "C" NOT NULL,
	"subpath" text COLLATE "C" DEFAULT '' NOT NULL,
	"uuid" text,
	"entry" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "session_store_keys" (
	"project_key" text COLLATE "C" NOT NULL,
	"session_id" text COLLATE "C" NOT NULL,
	"subpath" text COLLATE "C" DEFAULT '' NOT NULL,
	"mtime" bigint NOT NULL,
	"summary" text,
	CONSTRAINT "session_store_keys_pkey" PRIMARY KEY("project_key","session_id","subpath")
);
--> statement-breakpoint
CREATE INDEX "idx_agent_sessions_request_id" ON "agent_sessions" USING btree ("request_id");--> statement-breakpoint
CREATE INDEX "idx_agent_sessions_session_id" ON "agent_sessions" USING btree ("session_id");--> statement-breakpoint
CREATE INDEX "idx_agent_sessions_expires_at" ON "agent_sessions" USING btree ("expires_at") WHERE "agent_sessions"."expires_at" IS NOT NULL;--> statement-breakpoint
CREATE INDEX "idx_session_store_entries_key" ON "session_store_entries" USING btree ("project_key","session_id","subpath","id");--> statement-breakpoint
CREATE UNIQUE INDEX "uq_session_store_entries_uuid" ON "session_store_entries" USING btree ("project_key","session_id","subpath","uuid") WHERE "session_store_entries"."uuid" IS NOT NULL;