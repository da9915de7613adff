-- Document 002's own comments on its table, word for word (the codec column says when a blob is
-- brotli or zstd rather than gzip; "Claude SDK" is the document's name for every agent's session id).
COMMENT ON TABLE agent_sessions IS 'Persisted agent session data for ephemeral container resumption';--> statement-breakpoint
COMMENT ON COLUMN agent_sessions.session_id IS 'Claude SDK session ID returned from query()';--> statement-breakpoint
COMMENT ON COLUMN agent_sessions.session_blob IS 'Gzipped JSONL session file';--> statement-breakpoint
COMMENT ON COLUMN agent_sessions.expires_at IS 'Session expiry for cleanup (SDK sessions expire ~24h, we keep 7 days)';
