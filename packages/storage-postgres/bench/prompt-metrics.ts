// The prompt_metrics table: 10,000 entries appended one model call at a time and the series read
// back, against plain node-postgres INSERTs of the same rows (turns given by the caller) and one
// SELECT, on the same PostgreSQL.
import { randomBytes } from "node:crypto";
import { runBenchmarks } from "@stowage/bench-kit";
import { buildHotState, measurePrompt, type PromptMetrics } from "@stowage/hot-state";
import { countTokensHeuristic } from "@stowage/test-support";
import pg from "pg";
import { connectPostgres } from "../src/index.js";
import { createPostgresPromptMetricsLog } from "../src/metrics/index.js";

const url = process.env.DATABASE_URL;
if (!url) {
  console.error(
    "@stowage/storage-postgres prompt-metrics bench needs PostgreSQL: DATABASE_URL is not set.\n" +
      "Run: DATABASE_URL=postgres://postgres@127.0.0.1:5432/test pnpm bench",
  );
  process.exit(1);
}

const RECORDS = 10_000;
const quiet = { warn() {} };
const SESSION = "bench-session";
const schema = `stowage_bench_metrics_${randomBytes(4).toString("hex")}`;
const connection = await connectPostgres({ url, schema });
const pool = new pg.Pool({ connectionString: url, options: `-c search_path=${schema}`, max: 1 });

// 10,000 model calls, measured before timing: the log's cost, not measuring's.
const hotState = buildHotState(
  { session_id: SESSION, objective: "Migrate session storage" },
  { countTokens: countTokensHeuristic, logger: quiet },
);
const calls: PromptMetrics[] = Array.from({ length: RECORDS }, (_, i) =>
  measurePrompt(
    { sessionId: SESSION, hotState, systemPrompt: "s".repeat(4000 + (i % 500)), userPrompt: `turn ${i}` },
    { countTokens: countTokensHeuristic, logger: quiet, budget: { maxPromptTokens: 1000 + (i % 1000) } },
  ),
);

let run = 0;
const namespace = () => `bench-${run}`;

try {
  await runBenchmarks("@stowage/storage-postgres prompt metrics", [
    {
      name: `prompt_metrics: ${RECORDS.toLocaleString("en-US")} appends + read the series vs node-postgres INSERT of each row + SELECT`,
      target: { kind: "speed", min: 0.5 },
      units: { count: RECORDS, label: "ops" },
      rounds: 3,
      warmup: false,
      prepare: () => {
        run++;
      },
      ours: async () => {
        const log = createPostgresPromptMetricsLog({ db: connection.db, namespace: namespace() });
        for (const call of calls) await log.append(call);
        const series = await log.series(SESSION);
        if (series.length !== RECORDS) throw new Error(`read ${series.length} entries`);
      },
      baseline: async () => {
        const ns = namespace();
        let turn = 0;
        for (const call of calls) {
          turn++;
          const { record, warnings } = call;
          await pool.query(
            `INSERT INTO prompt_metrics (namespace, session_id, turn, recorded_at, hot_state_version, hs_tokens, est_tokens, budget_ok, entry)
             VALUES ($1, $2, $3, $4, NULL, $5, $6, $7, $8)`,
            [
              ns,
              SESSION,
              turn,
              new Date().toISOString(),
              record.hs_tokens,
              record.est_tokens,
              record.budget_ok,
              JSON.stringify({ record, warnings, violations: call.budget.violations }),
            ],
          );
        }
        const { rows } = await pool.query(
          "SELECT turn, recorded_at, entry FROM prompt_metrics WHERE namespace = $1 AND session_id = $2 ORDER BY turn",
          [ns, SESSION],
        );
        const parsed = rows.map((row) => JSON.parse(row.entry));
        if (parsed.length !== RECORDS) throw new Error(`read ${parsed.length} rows`);
      },
    },
  ]);
} finally {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool.end();
  await connection.close();
}
