// The metrics log on the file system: 10,000 prompt_metrics entries appended one call at a time
// and the series read back, against the fs store's own create-only puts (one object per entry: a
// new file each) and a listing and get of all of them.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runBenchmarks } from "@stowage/bench-kit";
import type { Logger } from "@stowage/core";
import { createFsObjectStore } from "@stowage/storage-fs";
import {
  buildHotState,
  countTokensHeuristic,
  createPromptMetricsLog,
  measurePrompt,
  type PromptMetrics,
} from "../src/index.js";

const RECORDS = 10_000;
const quiet: Logger = { warn() {} };
const SESSION = "bench-session";

// 10,000 model calls of one session, measured before timing: the log's cost, not measuring's.
const hotState = buildHotState(
  { session_id: SESSION, objective: "Migrate session storage", accepted_decisions: ["shard by two hex"] },
  { countTokens: countTokensHeuristic, logger: quiet },
);
const calls: PromptMetrics[] = Array.from({ length: RECORDS }, (_, i) =>
  measurePrompt(
    { sessionId: SESSION, hotState, systemPrompt: "s".repeat(4000 + (i % 500)), userPrompt: `turn ${i}` },
    { countTokens: countTokensHeuristic, logger: quiet, budget: { maxPromptTokens: 1000 + (i % 1000) } },
  ),
);

let root = "";
const fresh = async () => {
  if (root) await rm(root, { recursive: true, force: true });
  root = await mkdtemp(join(tmpdir(), "stowage-metrics-bench-"));
};

await runBenchmarks("@stowage/hot-state metrics log", [
  {
    // What the log adds over the store it writes to: the same create-only put per entry, then a
    // listing and a get of every object to read them back (no segments).
    name: `createPromptMetricsLog over the fs ObjectStore (fsync off) vs the store's own create-only put of each line + list and get them all`,
    target: { kind: "speed", min: 0.8 },
    units: { count: RECORDS, label: "ops" },
    rounds: 3,
    warmup: false,
    prepare: fresh,
    ours: async () => {
      const log = createPromptMetricsLog({
        store: createFsObjectStore({ root, fsync: false }),
        logger: quiet,
      });
      for (const call of calls) await log.append(call);
      const series = await log.series(SESSION);
      if (series.length !== RECORDS) throw new Error(`read ${series.length} entries`);
    },
    baseline: async () => {
      const store = createFsObjectStore({ root, fsync: false });
      let turn = 0;
      for (const call of calls) {
        turn++;
        const line = {
          turn,
          recorded_at: new Date().toISOString(),
          record: call.record,
          warnings: call.warnings,
        };
        await store.put(
          `raw/${String(turn).padStart(12, "0")}.json`,
          new TextEncoder().encode(`${JSON.stringify(line)}\n`),
          {
            ifNoneMatch: "*",
          },
        );
      }
      let read = 0;
      for await (const item of store.iterate({ prefix: "raw/" })) {
        JSON.parse(new TextDecoder().decode((await store.get(item.key))!));
        read++;
      }
      if (read !== RECORDS) throw new Error(`read ${read} objects`);
    },
    cleanup: () => rm(root, { recursive: true, force: true }),
  },
]);
