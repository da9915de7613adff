-- A reservation outlives commits and deletions until its key's last URL expires (hand-written: a
-- function body). The ledger no longer deletes a reservation on commit, so `uploads` counts only
-- the reservations that still hold bytes beyond what their key holds, as the `usage` figures do:
-- a committed upload whose URL is still valid is not pending. Nothing else changes.
CREATE OR REPLACE FUNCTION "stowage_quota_reserve"(
	p_scope text, p_key text, p_bytes bigint, p_limit bigint, p_expires_at timestamptz, p_token text
) RETURNS TABLE (
	"outcome" text, "used" bigint, "pending" bigint, "objects" integer, "uploads" integer,
	"expired" text[], "granted_token" text
) LANGUAGE plpgsql AS $$
DECLARE
	v_size bigint;
	v_reserved bigint;
	v_before bigint;
	v_after bigint;
BEGIN
	SELECT s.used_bytes, s.object_count INTO used, objects
		FROM quota_scopes s WHERE s.scope = p_scope FOR UPDATE;
	IF NOT FOUND THEN
		outcome := 'unlisted';
		RETURN NEXT;
		RETURN;
	END IF;
	SELECT coalesce(sum(greatest(r.bytes - coalesce(o.size, 0), 0)), 0),
		count(*) FILTER (WHERE r.bytes > coalesce(o.size, 0)),
		array_agg(r.key) FILTER (WHERE r.expires_at <= now()),
		max(r.bytes) FILTER (WHERE r.key = p_key),
		(SELECT k.size FROM quota_objects k WHERE k.scope = p_scope AND k.key = p_key)
		INTO pending, uploads, expired, v_reserved, v_size
		FROM quota_reservations r
		LEFT JOIN quota_objects o ON o.scope = r.scope AND o.key = r.key
		WHERE r.scope = p_scope;
	IF expired IS NOT NULL THEN
		outcome := 'expired';
		RETURN NEXT;
		RETURN;
	END IF;
	-- What the key adds to the pending total now, and with this reservation.
	v_before := greatest(coalesce(v_reserved, 0) - coalesce(v_size, 0), 0);
	v_after := greatest(greatest(coalesce(v_reserved, 0), p_bytes) - coalesce(v_size, 0), 0);
	IF used + pending - v_before + v_after > p_limit THEN
		outcome := 'exceeded';
		RETURN NEXT;
		RETURN;
	END IF;
	IF v_reserved IS NOT NULL THEN
		-- One reservation per key: the largest size, held until the last URL expires.
		UPDATE quota_reservations r SET
			bytes = greatest(r.bytes, p_bytes),
			issued_at = CASE WHEN p_bytes > r.bytes THEN now() ELSE r.issued_at END,
			expires_at = greatest(r.expires_at, p_expires_at),
			holders = r.holders + 1
			WHERE r.scope = p_scope AND r.key = p_key;
	ELSIF p_bytes > 0 THEN
		INSERT INTO quota_reservations (scope, key, bytes, issued_at, expires_at, holders, token)
			VALUES (p_scope, p_key, p_bytes, now(), p_expires_at, 1, p_token);
		granted_token := p_token;
	END IF;
	pending := pending - v_before + v_after;
	uploads := uploads - (v_before > 0)::integer + (v_after > 0)::integer;
	outcome := 'granted';
	RETURN NEXT;
END
$$;
