import { randomBytes, randomUUID } from "node:crypto";
import type { SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";
import { runBenchmarks } from "@stowage/bench-kit";
import { realisticSessionTree } from "@stowage/sessions/testing";
import pg from "pg";
import { createPostgresSessionStore } from "../src/agent-sdk/index.js";
import { connectPostgres, createPostgresSessionBlobs } from "../src/index.js";

const url = process.env.DATABASE_URL;
if (!url) {
  console.error(
    "@stowage/storage-postgres bench needs PostgreSQL: DATABASE_URL is not set.\n" +
      "Start the server and run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/test pnpm bench",
  );
  process.exit(1);
}

const schema = `stowage_bench_${randomBytes(4).toString("hex")}`;
const connection = await connectPostgres({ url, schema });
// The baseline: plain node-postgres on the same tables, no Stowage and no drizzle in between.
const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}` });

const BLOB_BYTES = 4 * 1024 * 1024;
const blob = new Uint8Array(randomBytes(BLOB_BYTES)); // compressed archives are incompressible
const repo = createPostgresSessionBlobs(connection.db);

// 50,000 transcript lines shaped like the SDK mirrors them, taken from a realistic session and
// given fresh uuids, appended in batches of 500 (the SDK's importSessionToStore default).
const ENTRIES = 50_000;
const BATCH = 500;
const sessionId = randomUUID();
const lines = realisticSessionTree({
  sessionId,
  cwd: "/workspace/app",
  mainBytes: 4_000_000,
  subagents: 0,
  toolResults: 0,
  legacyAgents: 0,
  screenshotEvery: 0,
})
  .get(`${sessionId}.jsonl`)!
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as SessionStoreEntry);
const entries = Array.from({ length: ENTRIES }, (_, i) => ({
  ...lines[i % lines.length]!,
  uuid: randomUUID(),
}));
const batches = Array.from({ length: ENTRIES / BATCH }, (_, i) => entries.slice(i * BATCH, (i + 1) * BATCH));
const entryBytes = entries.reduce((sum, entry) => sum + JSON.stringify(entry).length, 0);
console.log(
  `append case: ${ENTRIES.toLocaleString("en-US")} entries, ${(entryBytes / 1024 / 1024).toFixed(1)} MiB of JSON`,
);
const store = createPostgresSessionStore(connection.db);

const truncate = async () => {
  await pool.query("TRUNCATE agent_sessions, session_store_entries, session_store_keys");
};

try {
  await runBenchmarks("@stowage/storage-postgres", [
    {
      name: "store + load of a 4 MiB session blob: repository create + getLatestForRequest vs raw pg INSERT … RETURNING + SELECT",
      target: { kind: "time", max: 1.2 },
      units: { count: 2 * BLOB_BYTES, label: "B" },
      rounds: 15,
      prepare: truncate,
      ours: async () => {
        const requestId = `req-${randomUUID()}`;
        await repo.create({
          requestId,
          sessionId: randomUUID(),
          agentType: "claude-code",
          codec: "brotli",
          blob,
          rawSizeBytes: 3 * BLOB_BYTES,
        });
        const found = await repo.getLatestForRequest(requestId);
        if (found?.blob.byteLength !== BLOB_BYTES) throw new Error("blob did not round-trip");
      },
      baseline: async () => {
        const requestId = `req-${randomUUID()}`;
        const inserted = await pool.query(
          `INSERT INTO agent_sessions (request_id, session_id, agent_type, session_blob, blob_size_bytes, codec, raw_size_bytes, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
          [
            requestId,
            randomUUID(),
            "claude-code",
            Buffer.from(blob.buffer),
            BLOB_BYTES,
            "brotli",
            3 * BLOB_BYTES,
            new Date(Date.now() + 7 * 86_400_000),
          ],
        );
        const found = await pool.query("SELECT session_blob FROM agent_sessions WHERE id = $1", [
          inserted.rows[0].id,
        ]);
        if (found.rows[0].session_blob.byteLength !== BLOB_BYTES) throw new Error("blob did not round-trip");
      },
    },
    {
      name: `SessionStore.append of ${ENTRIES.toLocaleString("en-US")} entries in batches of ${BATCH} vs raw batched multi-row INSERTs with pg`,
      target: { kind: "speed", min: 0.7 },
      units: { count: ENTRIES, label: "ops" },
      rounds: 5,
      prepare: truncate,
      ours: async () => {
        const key = { projectKey: "-workspace-app", sessionId: randomUUID() };
        for (const batch of batches) await store.append(key, batch);
      },
      baseline: async () => {
        const id = randomUUID();
        for (const batch of batches) {
          const values: unknown[] = [];
          const rows = batch.map((entry, i) => {
            values.push("-workspace-app", id, "", entry.uuid ?? null, JSON.stringify(entry));
            return `($${i * 5 + 1}, $${i * 5 + 2}, $${i * 5 + 3}, $${i * 5 + 4}, $${i * 5 + 5})`;
          });
          await pool.query(
            `INSERT INTO session_store_entries (project_key, session_id, subpath, uuid, entry) VALUES ${rows.join(", ")}`,
            values,
          );
        }
      },
    },
  ]);
} finally {
  await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
  await pool.end();
  await connection.close();
}
