// One process appending `count` prompt_metrics entries to a session's log on the file system,
// racing another process doing the same, through the fs ObjectStore. Each entry's run is the
// writer, its system prompt `step` characters. With `barrier` and `writers`, it starts appending
// only once every writer has left its file in `barrier`, so that the appends overlap.
import { createFsObjectStore } from "@stowage/storage-fs";
import {
  buildHotState,
  countTokensHeuristic,
  createPromptMetricsLog,
  measurePrompt,
} from "../../src/index.js";
import { passBarrier } from "./barrier.js";

const [root, sessionId, writer, count, barrier, writers] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string?,
  string?,
];
const quiet = { warn() {} };
const log = createPromptMetricsLog({ store: createFsObjectStore({ root }), logger: quiet });
const hotState = buildHotState(
  { session_id: sessionId },
  { countTokens: countTokensHeuristic, logger: quiet },
);
if (barrier && writers) await passBarrier(barrier, writer, writers);
const turns: number[] = [];
for (let step = 0; step < Number(count); step++) {
  const metrics = measurePrompt(
    { sessionId, hotState, systemPrompt: "s".repeat(step), userPrompt: "go on", runId: writer },
    { countTokens: countTokensHeuristic, logger: quiet },
  );
  turns.push((await log.append(metrics)).turn);
}
// The turns this writer was given, for the parent to compare with what it reads.
process.stdout.write(`${turns.join(" ")}\n`);
