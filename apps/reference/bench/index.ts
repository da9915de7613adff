// Benchmark of the reference app: 20 concurrent upload-URL requests over HTTP against one session,
// with the PostgreSQL quota ledger the app uses (all 20 reserve on one session's row, under its
// lock), against a raw baseline doing the least the same request must do: a node:http server that
// parses the JSON body, reserves the bytes with one `UPDATE … RETURNING` on one row of the same
// database, and signs a URL with HMAC-SHA256. Both run in this process, over real sockets.
import { createHmac, randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runBenchmarks } from "@stowage/bench-kit";
import { sql } from "drizzle-orm";
import { loadConfig } from "../src/config.js";
import { startServer } from "../src/http/server.js";

/** Upload-URL requests sent at once, as the issue asks. */
const CONCURRENT_REQUESTS = 20;
/** Batches of them per timed run, so that a run is long enough to time. */
const BATCHES_PER_RUN = 5;

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.log("\n@stowage/cli: set DATABASE_URL (PostgreSQL) to run the upload-URL benchmark");
  process.exit(0);
}

const dataDir = await mkdtemp(join(tmpdir(), "stowage-bench-"));
const quiet = { info: () => {}, error: () => {} };
const config = await loadConfig(
  {
    STOWAGE_DATA_DIR: dataDir,
    STOWAGE_PORT: "0",
    DATABASE_URL: databaseUrl,
    // The limiter is part of every request; its limit must not be what the run measures.
    STOWAGE_RATE_LIMIT_PER_MINUTE: "100000000",
  },
  dataDir,
);
const server = await startServer(config, { log: quiet });
const { apiKey } = await server.services.apiKeys.issue({
  kind: "user",
  id: `bench-${randomUUID().slice(0, 8)}`,
});
const sessionId = randomUUID();
const registered = await fetch(`${server.url}/agents/sessions`, {
  method: "POST",
  headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
  body: JSON.stringify({ sessionId }),
});
if (registered.status !== 201) throw new Error(`registration failed: ${await registered.text()}`);

// The raw baseline: one table, one row, one statement per request, on the app's own pool.
const { db } = server.services.database;
const table = sql.identifier(`bench_quota_${randomBytes(4).toString("hex")}`);
await db.execute(sql`CREATE TABLE ${table} (scope text PRIMARY KEY, reserved bigint NOT NULL)`);
await db.execute(sql`INSERT INTO ${table} VALUES (${sessionId}, 0)`);
const secret = randomBytes(32);

async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
}

const raw = createServer(async (request, response) => {
  const body = await readJson(request);
  const size = Number(body.fileSize);
  const { rows } = (await db.execute(
    sql`UPDATE ${table} SET reserved = reserved + ${size} WHERE scope = ${String(body.agentSessionId)} AND reserved + ${size} <= ${500 * 1024 * 1024} RETURNING reserved`,
  )) as { rows: unknown[] };
  const key = `sessions/user/bench/${body.agentSessionId}/artifacts/${body.filename}`;
  const signature = createHmac("sha256", secret).update(`PUT\n${key}\n${body.fileSize}`).digest("hex");
  response.writeHead(rows.length === 1 ? 200 : 400, { "content-type": "application/json" });
  response.end(JSON.stringify({ url: `http://raw/${key}?s=${signature}`, key, expiresIn: 900 }));
});
await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
const rawUrl = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;

let sent = 0;
/** One batch of concurrent requests to `base`; every one must be granted. */
async function batch(base: string, headers: Record<string, string>): Promise<void> {
  const responses = await Promise.all(
    Array.from({ length: CONCURRENT_REQUESTS }, () =>
      fetch(`${base}/agents/artifacts/upload-url`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({
          agentSessionId: sessionId,
          filename: `part-${sent++}.txt`,
          contentType: "text/plain",
          fileSize: 1,
        }),
      }),
    ),
  );
  for (const response of responses) {
    if (response.status !== 200) throw new Error(`not granted: ${response.status} ${await response.text()}`);
  }
}

try {
  await runBenchmarks("@stowage/cli (the reference app over HTTP, PostgreSQL quota ledger)", [
    {
      name: `${CONCURRENT_REQUESTS} concurrent POST /agents/artifacts/upload-url on one session x${BATCHES_PER_RUN} (key check, rate limit, session check, reservation under the session's row lock, signing) vs raw node:http + UPDATE … RETURNING + HMAC`,
      // Our request makes about five database round trips (key record, rate-limit bucket, session
      // registration, the reservation's transaction) where the baseline makes one.
      target: { kind: "speed", min: 0.15 },
      units: { count: CONCURRENT_REQUESTS * BATCHES_PER_RUN, label: "ops" },
      rounds: 7,
      async ours() {
        for (let i = 0; i < BATCHES_PER_RUN; i++)
          await batch(server.url, { authorization: `Bearer ${apiKey}` });
      },
      async baseline() {
        for (let i = 0; i < BATCHES_PER_RUN; i++) await batch(rawUrl, {});
      },
    },
  ]);
} finally {
  raw.close();
  await db.execute(sql`DROP TABLE ${table}`);
  await server.close();
  await rm(dataDir, { recursive: true, force: true });
}
