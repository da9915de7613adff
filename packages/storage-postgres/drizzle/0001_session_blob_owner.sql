ALTER TABLE "agent_sessions" DROP CONSTRAINT "agent_sessions_request_id_session_id_unique";--> statement-breakpoint
DROP INDEX "idx_agent_sessions_request_id";--> statement-breakpoint
DROP INDEX "idx_agent_sessions_session_id";--> statement-breakpoint
-- Rows stored before owners existed get the owner '' (hand-edited: drizzle-kit writes a bare
-- NOT NULL column, which fails on a table with rows). '' is not a safe id, so no caller can name
-- it: those sessions are unreachable until an operator assigns them an owner, and expire as usual.
ALTER TABLE "agent_sessions" ADD COLUMN "owner" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "agent_sessions" ALTER COLUMN "owner" DROP DEFAULT;--> statement-breakpoint
CREATE INDEX "idx_agent_sessions_owner_request_id" ON "agent_sessions" USING btree ("owner","request_id");--> statement-breakpoint
CREATE INDEX "idx_agent_sessions_owner_session_id" ON "agent_sessions" USING btree ("owner","session_id");--> statement-breakpoint
ALTER TABLE "agent_sessions" ADD CONSTRAINT "agent_sessions_owner_request_id_session_id_unique" UNIQUE("owner","request_id","session_id");