import { randomBytes, randomUUID } from "node:crypto";
import { checkpointDatabase, runBenchmarks } from "@stowage/bench-kit";
import { createMemoryObjectStore } from "@stowage/core";
import { compressChunks } from "@stowage/sessions";
import { realisticTranscriptEntries } from "@stowage/sessions/testing";
import { createMemoryQuotaLedger, type QuotaLedger, usageSourceFromStore } from "@stowage/uploads";
import pg from "pg";
import { connectPostgres } from "../src/index.js";
import { createPostgresSessionBlobs, createPostgresSessionStore } from "../src/sessions/index.js";
import { createPostgresQuotaLedger } from "../src/uploads/index.js";

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

// 50,000 transcript lines shaped like the SDK mirrors them, taken from a realistic session and
// given fresh uuids, appended in batches of 500 (the SDK's importSessionToStore default).
const ENTRIES = 50_000;
const BATCH = 500;
const sessionId = randomUUID();
const lines = realisticTranscriptEntries(sessionId);
// A stored session must be restorable, so the repository decodes every blob it is given: the
// blob is a real one, the design document's form (gzip of the session's JSONL).
const sessionJsonl = new TextEncoder().encode(`${lines.map((line) => JSON.stringify(line)).join("\n")}\n`);
const blob = await compressChunks("gzip", [sessionJsonl]);
const BLOB_BYTES = blob.byteLength;
console.log(
  `blob case: ${(sessionJsonl.byteLength / 1024 / 1024).toFixed(1)} MiB of JSONL, ${(BLOB_BYTES / 1024 / 1024).toFixed(1)} MiB gzipped`,
);
const repo = createPostgresSessionBlobs({ db: connection.db });
const entries = Array.from({ length: ENTRIES }, (_, i) => ({
  ...lines[i % lines.length]!,
  uuid: randomUUID(),
}));
const batches = Array.from({ length: ENTRIES / BATCH }, (_, i) => entries.slice(i * BATCH, (i + 1) * BATCH));
const entryBytes = entries.reduce((sum, entry) => sum + JSON.stringify(entry).length, 0);
console.log(
  `append case: ${ENTRIES.toLocaleString("en-US")} entries, ${(entryBytes / 1024 / 1024).toFixed(1)} MiB of JSON`,
);
const store = createPostgresSessionStore({ db: connection.db });

// Quota: one reservation per upload-url request, each in its own session (a session rarely has
// more than a few URLs open), the way the upload service asks. The raw baseline is the least a
// shared counter costs: one UPDATE … RETURNING of a row, checked against the limit.
const RESERVATIONS = 500;
const quotaScopes = Array.from({ length: RESERVATIONS }, (_, i) => `sessions/user/bench/s${i}/`);
const quotaSource = usageSourceFromStore(createMemoryObjectStore());
const postgresLedger = createPostgresQuotaLedger({ db: connection.db });
let memoryLedger: QuotaLedger = createMemoryQuotaLedger();
const reserveAll = async (ledger: QuotaLedger) => {
  const urlExpiresAt = new Date(Date.now() + 3600_000);
  for (const scope of quotaScopes) {
    await ledger.reserve({
      scope,
      key: `${scope}upload.bin`,
      bytes: 1024,
      limitBytes: 1024 * 1024,
      urlExpiresAt,
      source: quotaSource,
    });
  }
};
await pool.query("CREATE TABLE quota_bench (scope text PRIMARY KEY, used bigint NOT NULL DEFAULT 0)");
await pool.query("INSERT INTO quota_bench (scope) SELECT unnest($1::text[])", [quotaScopes]);
// Every scope listed once, untimed: the cases measure reservations, not first listings.
for (const scope of quotaScopes) await postgresLedger.usage(scope, quotaSource);
const resetQuota = async () => {
  await pool.query("TRUNCATE quota_reservations");
  await pool.query("UPDATE quota_bench SET used = 0");
  memoryLedger = createMemoryQuotaLedger();
  for (const scope of quotaScopes) await memoryLedger.usage(scope, quotaSource);
};
const rawReserveAll = async () => {
  for (const scope of quotaScopes) {
    const { rows } = await pool.query(
      "UPDATE quota_bench SET used = used + $1 WHERE scope = $2 AND used + $1 <= $3 RETURNING used",
      [1024, scope, 1024 * 1024],
    );
    if (rows.length !== 1) throw new Error("raw reservation refused");
  }
};

const truncate = async () => {
  await pool.query("TRUNCATE agent_sessions, session_store_entries, session_store_keys");
  await checkpointDatabase(pool);
};

try {
  await runBenchmarks("@stowage/storage-postgres", [
    {
      // Ours also decodes the whole blob before storing it (an unrestorable session is refused at
      // store time); the raw statements store bytes unchecked.
      name: "store + load of a gzipped session blob, checked when stored: repository create + getLatestForRequest vs raw pg INSERT … RETURNING + SELECT",
      target: { kind: "time", max: 2 },
      units: { count: 2 * BLOB_BYTES, label: "B" },
      rounds: 15,
      prepare: truncate,
      ours: async () => {
        const requestId = `req-${randomUUID()}`;
        await repo.create({
          owner: "user:bench",
          requestId,
          sessionId,
          agentType: "claude-code",
          codec: "gzip",
          blob,
          rawSizeBytes: sessionJsonl.byteLength,
        });
        const found = await repo.getLatestForRequest("user:bench", requestId);
        if (found?.blob.byteLength !== BLOB_BYTES) throw new Error("blob did not round-trip");
      },
      baseline: async () => {
        const requestId = `req-${randomUUID()}`;
        const inserted = await pool.query(
          `INSERT INTO agent_sessions (owner, request_id, session_id, agent_type, session_blob, blob_size_bytes, codec, raw_size_bytes, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
          [
            "user:bench",
            requestId,
            sessionId,
            "claude-code",
            Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength),
            BLOB_BYTES,
            "gzip",
            sessionJsonl.byteLength,
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
    {
      name: `quota: ${RESERVATIONS} reservations, createPostgresQuotaLedger.reserve vs a raw UPDATE … RETURNING of one row`,
      target: { kind: "speed", min: 0.7 },
      units: { count: RESERVATIONS, label: "ops" },
      rounds: 9,
      prepare: resetQuota,
      ours: () => reserveAll(postgresLedger),
      baseline: rawReserveAll,
    },
    {
      // For scale only: what sharing the ledger across processes costs (a round trip, a row lock
      // and a durable commit per request) against a Map in this process. The issue sets no
      // target, and the ratio is mostly the disk's commit latency (700x to 2,200x on this VM), so
      // the case never fails; the raw UPDATE case above holds the target.
      name: `quota: ${RESERVATIONS} reservations, createPostgresQuotaLedger.reserve vs the memory ledger (one process only; for scale)`,
      target: { kind: "speed", min: 0 },
      units: { count: RESERVATIONS, label: "ops" },
      rounds: 9,
      prepare: resetQuota,
      ours: () => reserveAll(postgresLedger),
      baseline: () => reserveAll(memoryLedger),
    },
  ]);
} finally {
  await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
  await pool.end();
  await connection.close();
}

// The package's other cases, in the same run: a missed target above only sets the exit code, so
// every case is still printed.
// The SessionStore against its reference: interleaved, a new database per run (session-store.ts).
await import("./session-store.js");
await import("./prompt-metrics.js");
await import("./langgraph-savers.js");
