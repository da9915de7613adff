CREATE TABLE "session_store_trash" (
	"trash_id" text PRIMARY KEY NOT NULL,
	"project_key" text COLLATE "C" NOT NULL,
	"session_id" text COLLATE "C" NOT NULL,
	"subpath" text COLLATE "C" NOT NULL,
	"trashed_at" timestamp with time zone NOT NULL,
	"purge_after" timestamp with time zone NOT NULL,
	"bytes" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "session_store_trash_entries" (
	"trash_id" text NOT NULL,
	"id" bigint NOT NULL,
	"project_key" text COLLATE "C" NOT NULL,
	"session_id" text COLLATE "C" NOT NULL,
	"subpath" text COLLATE "C" NOT NULL,
	"uuid" text,
	"entry" text NOT NULL,
	CONSTRAINT "session_store_trash_entries_pkey" PRIMARY KEY("trash_id","id")
);
--> statement-breakpoint
CREATE TABLE "session_store_trash_keys" (
	"trash_id" text NOT NULL,
	"project_key" text COLLATE "C" NOT NULL,
	"session_id" text COLLATE "C" NOT NULL,
	"subpath" text COLLATE "C" NOT NULL,
	"mtime" bigint NOT NULL,
	"summary" text,
	CONSTRAINT "session_store_trash_keys_pkey" PRIMARY KEY("trash_id","subpath")
);
--> statement-breakpoint
CREATE INDEX "idx_session_store_trash_project" ON "session_store_trash" USING btree ("project_key","trashed_at");--> statement-breakpoint
CREATE INDEX "idx_session_store_trash_purge_after" ON "session_store_trash" USING btree ("purge_after");