import { randomBytes, randomUUID } from "node:crypto";
import { gzipSync } from "node:zlib";
import { expectStowageError } from "@stowage/core/testing";
import { describeSessionBlobRepositoryConformance, sampleSessionBlob } from "@stowage/sessions/testing";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { rowsOf } from "../../src/database.js";
import { agentSessions } from "../../src/schema.js";
import { createPostgresSessionBlobs } from "../../src/sessions/session-blobs.js";
import { describeBackends } from "../backends.js";

describeBackends("postgres session blobs", (backend) => {
  describeSessionBlobRepositoryConformance({
    name: `postgres session blobs on ${backend.name}`,
    createRepository: () => createPostgresSessionBlobs({ db: backend.connection().db }),
    destroyRepository: async () => {
      await backend.connection().db.delete(agentSessions);
    },
  });

  describe("specific to the agent_sessions table", () => {
    it("has the columns, unique pair and indexes of the issue", async () => {
      const { db } = backend.connection();
      const columns = rowsOf(
        await db.execute(sql`
          SELECT column_name, data_type, is_nullable FROM information_schema.columns
          WHERE table_schema = current_schema() AND table_name = 'agent_sessions' ORDER BY ordinal_position`),
      ).map(
        (row) => `${row.column_name} ${row.data_type} ${row.is_nullable === "YES" ? "null" : "not null"}`,
      );
      expect(columns).toEqual([
        "id integer not null",
        "request_id text not null",
        "session_id text not null",
        "agent_type text not null",
        "session_blob bytea not null",
        "blob_size_bytes integer not null",
        "codec text not null",
        "raw_size_bytes integer not null",
        "created_at timestamp with time zone not null",
        "expires_at timestamp with time zone null",
        // Added by 0001_session_blob_owner; ALTER TABLE appends.
        "owner text not null",
        // Added by 0010_session_blob_stored_bytes: what a capture kept as chunks added; null before.
        "stored_bytes integer null",
        // Added by 0012_session_blob_trashed_by: who deleted the row before its time; null otherwise.
        "trashed_by text null",
      ]);
      const indexes = rowsOf(
        await db.execute(
          sql`SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'agent_sessions'`,
        ),
      ).map((row) => String(row.indexdef).replace(/ ON \S+\.agent_sessions/, " ON agent_sessions"));
      expect(indexes).toEqual(
        expect.arrayContaining([
          expect.stringMatching(
            /UNIQUE INDEX agent_sessions_owner_request_id_session_id_unique .*\(owner, request_id, session_id\)/,
          ),
          expect.stringMatching(/INDEX idx_agent_sessions_owner_request_id .*\(owner, request_id\)$/),
          expect.stringMatching(/INDEX idx_agent_sessions_owner_session_id .*\(owner, session_id\)$/),
          expect.stringMatching(
            /INDEX idx_agent_sessions_expires_at .*\(expires_at\) WHERE \(expires_at IS NOT NULL\)/,
          ),
        ]),
      );
    });

    it("carries document 002's COMMENT ON TABLE and COMMENT ON COLUMN lines, word for word", async () => {
      const { db } = backend.connection();
      const comments = rowsOf(
        await db.execute(sql`
          SELECT coalesce(a.attname, '') AS column_name, d.description FROM pg_description d
          JOIN pg_class c ON c.oid = d.objoid AND c.relname = 'agent_sessions'
          JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
          LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = d.objsubid AND d.objsubid > 0
          WHERE d.classoid = 'pg_class'::regclass ORDER BY d.objsubid`),
      ).map((row) => [row.column_name, row.description]);
      // The document's own lines (002, "Database Schema"), copied by hand.
      expect(comments).toEqual([
        ["", "Persisted agent session data for ephemeral container resumption"],
        ["session_id", "Claude SDK session ID returned from query()"],
        ["session_blob", "Gzipped JSONL session file"],
        ["expires_at", "Session expiry for cleanup (SDK sessions expire ~24h, we keep 7 days)"],
      ]);
    });

    it("the database refuses a codec the schema does not know, whoever writes the row", async () => {
      const { db } = backend.connection();
      const err = await db
        .insert(agentSessions)
        .values({
          owner: "user:alice",
          requestId: "r",
          sessionId: randomUUID(),
          agentType: "claude-code",
          sessionBlob: new Uint8Array([1]),
          blobSizeBytes: 1,
          codec: "lz4",
          rawSizeBytes: 1,
        })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Error);
    });

    it("two cleaners running at once delete every expired row exactly once, each told to one", async () => {
      const { db } = backend.connection();
      const repo = createPostgresSessionBlobs({ db });
      const past = new Date(Date.now() - 60_000);
      const ids: number[] = [];
      for (let i = 0; i < 60; i++) {
        const { id } = await repo.create({
          owner: i % 2 ? "user:alice" : "org:acme",
          requestId: "req-cleaners",
          ...sampleSessionBlob({ sessionId: randomUUID() }),
          expiresAt: past,
        });
        ids.push(id);
      }
      const told: number[][] = [[], []];
      const counts = await Promise.all(
        told.map((into) =>
          repo.deleteExpired({
            batchSize: 7,
            onDeleted: (deleted) => void into.push(...deleted.map((record) => record.id)),
          }),
        ),
      );
      expect(counts[0]! + counts[1]!).toBe(60);
      // Every deleted row reported once, by the cleaner that deleted it (its audit's row).
      expect([...told[0]!, ...told[1]!].sort((a, b) => a - b)).toEqual(ids);
      expect(told.map((into) => into.length)).toEqual(counts);
      expect(await repo.deleteExpired()).toBe(0);
    });

    it("a 4 MB blob round-trips byte for byte", async () => {
      const repo = createPostgresSessionBlobs({ db: backend.connection().db });
      // Blobs are read through when stored: a JSONL transcript whose random line hardly compresses.
      const sessionId = randomUUID();
      const jsonl = `${JSON.stringify({ type: "user", sessionId, data: randomBytes(3 * 1024 * 1024).toString("base64") })}\n`;
      const blob = new Uint8Array(gzipSync(jsonl));
      expect(blob.byteLength).toBeGreaterThan(3 * 1024 * 1024);
      await repo.create({
        owner: "user:alice",
        requestId: "req-big",
        sessionId,
        agentType: "claude-code",
        codec: "gzip",
        blob,
        rawSizeBytes: Buffer.byteLength(jsonl),
      });
      const found = await repo.getBySessionId("user:alice", sessionId);
      expect(found?.blob.constructor).toBe(Uint8Array);
      expect(Buffer.from(found!.blob).equals(Buffer.from(blob))).toBe(true);
      await repo.deleteForRequest("user:alice", "req-big");
    });

    it("keeps maxRawBytes: a blob that inflates past it is refused before any row is written", async () => {
      const { db } = backend.connection();
      const repo = createPostgresSessionBlobs({ db, maxRawBytes: 1024 });
      const sessionId = randomUUID();
      // 4 KiB of JSONL, gzipped to a few dozen bytes: small as stored, over the cap once read.
      const jsonl = `${JSON.stringify({ type: "user", sessionId, data: "a".repeat(4096) })}\n`;
      const stored = repo.create({
        owner: "user:alice",
        requestId: "req-inflates",
        sessionId,
        agentType: "claude-code",
        codec: "gzip",
        blob: new Uint8Array(gzipSync(jsonl)),
        rawSizeBytes: Buffer.byteLength(jsonl),
      });
      const err = await expectStowageError(stored, "TOO_LARGE", "DECOMPRESSED_TOO_LARGE");
      expect(err.details).toMatchObject({ limit: 1024 });
      expect(await repo.getBySessionId("user:alice", sessionId)).toBeNull();
    });
  });
});
