import { randomBytes, randomUUID } from "node:crypto";
import { describeSessionBlobRepositoryConformance } from "@stowage/sessions/testing";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { describeBackends } from "../test/backends.js";
import { rowsOf } from "./database.js";
import { agentSessions } from "./schema.js";
import { createPostgresSessionBlobs } from "./session-blobs.js";

describeBackends("postgres session blobs", (backend) => {
  describeSessionBlobRepositoryConformance({
    name: `postgres session blobs on ${backend.name}`,
    createRepository: () => createPostgresSessionBlobs(backend.connection().db),
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
      ]);
      const indexes = rowsOf(
        await db.execute(
          sql`SELECT indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'agent_sessions'`,
        ),
      ).map((row) => String(row.indexdef).replace(/ ON \S+\.agent_sessions/, " ON agent_sessions"));
      expect(indexes).toEqual(
        expect.arrayContaining([
          expect.stringMatching(
            /UNIQUE INDEX agent_sessions_request_id_session_id_unique .*\(request_id, session_id\)/,
          ),
          expect.stringMatching(/INDEX idx_agent_sessions_request_id .*\(request_id\)$/),
          expect.stringMatching(
            /INDEX idx_agent_sessions_expires_at .*\(expires_at\) WHERE \(expires_at IS NOT NULL\)/,
          ),
        ]),
      );
    });

    it("the database refuses a codec the schema does not know, whoever writes the row", async () => {
      const { db } = backend.connection();
      const err = await db
        .insert(agentSessions)
        .values({
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

    it("two cleaners running at once delete every expired row exactly once", async () => {
      const { db } = backend.connection();
      const repo = createPostgresSessionBlobs(db);
      const past = new Date(Date.now() - 60_000);
      for (let i = 0; i < 60; i++) {
        await repo.create({
          requestId: "req-cleaners",
          sessionId: randomUUID(),
          agentType: "claude-code",
          codec: "gzip",
          blob: new Uint8Array(randomBytes(64)),
          rawSizeBytes: 100,
          expiresAt: past,
        });
      }
      const counts = await Promise.all([
        repo.deleteExpired({ batchSize: 7 }),
        repo.deleteExpired({ batchSize: 7 }),
      ]);
      expect(counts[0]! + counts[1]!).toBe(60);
      expect(await repo.deleteExpired()).toBe(0);
    });

    it("a 4 MB blob round-trips byte for byte", async () => {
      const repo = createPostgresSessionBlobs(backend.connection().db);
      const blob = new Uint8Array(randomBytes(4 * 1024 * 1024));
      const sessionId = randomUUID();
      await repo.create({
        requestId: "req-big",
        sessionId,
        agentType: "claude-code",
        codec: "brotli",
        blob,
        rawSizeBytes: 9e6,
      });
      const found = await repo.getBySessionId(sessionId);
      expect(found?.blob.constructor).toBe(Uint8Array);
      expect(Buffer.from(found!.blob).equals(Buffer.from(blob))).toBe(true);
      await repo.deleteForRequest("req-big");
    });
  });
});
