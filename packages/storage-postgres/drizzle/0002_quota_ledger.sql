CREATE TABLE "quota_objects" (
	"scope" text COLLATE "C" NOT NULL,
	"key" text COLLATE "C" NOT NULL,
	"size" bigint NOT NULL,
	CONSTRAINT "quota_objects_pkey" PRIMARY KEY("scope","key"),
	CONSTRAINT "quota_objects_size_check" CHECK ("quota_objects"."size" >= 0)
);
--> statement-breakpoint
CREATE TABLE "quota_reservations" (
	"scope" text COLLATE "C" NOT NULL,
	"key" text COLLATE "C" NOT NULL,
	"bytes" bigint NOT NULL,
	"issued_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"holders" integer NOT NULL,
	"token" text NOT NULL,
	CONSTRAINT "quota_reservations_pkey" PRIMARY KEY("scope","key"),
	CONSTRAINT "quota_reservations_bytes_check" CHECK ("quota_reservations"."bytes" > 0 AND "quota_reservations"."holders" > 0)
);
--> statement-breakpoint
CREATE TABLE "quota_scopes" (
	"scope" text COLLATE "C" PRIMARY KEY NOT NULL,
	"used_bytes" bigint DEFAULT 0 NOT NULL,
	"object_count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "quota_scopes_totals_check" CHECK ("quota_scopes"."used_bytes" >= 0 AND "quota_scopes"."object_count" >= 0)
);
--> statement-breakpoint
-- Hand-written (drizzle-kit does not generate functions): the quota ledger's check-and-reserve in
-- one round trip. The scope row's lock serializes every change to a scope; each statement after
-- it runs with a fresh snapshot, so it sees every change committed before the lock was granted.
-- Outcomes: 'unlisted' (no row yet: list the scope first), 'expired' (settle these keys first),
-- 'exceeded' (the request does not fit) or 'granted'. A key's new size replaces what it holds or
-- has reserved, never adds to it.
CREATE FUNCTION "stowage_quota_reserve"(
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
	SELECT coalesce(sum(greatest(r.bytes - coalesce(o.size, 0), 0)), 0), count(*),
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
		uploads := uploads + 1;
		granted_token := p_token;
	END IF;
	pending := pending - v_before + v_after;
	outcome := 'granted';
	RETURN NEXT;
END
$$;
