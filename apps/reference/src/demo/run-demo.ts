// The scripted agent run of `stowage demo`: every step goes through the real HTTP API of a running
// server (or the packages an agent itself uses on its own machine), and is checked. The steps are
// in agent-steps.ts and stored-sessions.ts, each over the run's context (demo-run.ts).
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { plainPostItem, type ThreadItem, thinkingItem } from "@stowage/thread-items";
import type { RunningServer } from "../http/server.js";
import {
  externalizeScreenshot,
  postLongToolOutput,
  readSubagentOutput,
  uploadScreenshot,
} from "./agent-steps.js";
import { apiClient } from "./api-client.js";
import { check, type DemoRun } from "./demo-run.js";
import { DEMO_VIOLATION_TURN, type DispatcherTurns, runDispatcherTurns } from "./dispatcher-turns.js";
import { demoScreenshot } from "./screenshot.js";
import { storeContainerSessions } from "./stored-sessions.js";

export interface DemoResult {
  apiKey: string;
  agentSessionId: string;
  thread: { jobId: string; alias: string };
  viewerUrl: string;
  lines: string[];
  /** The dispatcher's hot state and the metrics of its model calls. */
  hotState: DispatcherTurns;
}

/** Steps 1 and 2: an API key for the demo user, and the agent session the run writes into. */
async function startRun(server: RunningServer, step: (line: string) => void): Promise<DemoRun> {
  const { services } = server;
  // 1. An API key for the demo user (what `stowage keys create --user demo` does).
  const { apiKey } = await services.apiKeys.issue({ kind: "user", id: "demo" }, { label: "stowage demo" });
  const api = apiClient(server.url, apiKey);
  step("1. issued an API key for user demo (only its hash is stored)");

  // 2. The agent's session, registered in user demo's namespace (uploads and reads need it). The
  // agent runs beside the server here, so it writes its artifacts straight into that session.
  const agentSessionId = randomUUID();
  await api.post("/agents/sessions", { sessionId: agentSessionId });
  const session = await services.tenant({ kind: "user", id: "demo" }).agentSessions.get(agentSessionId);
  step(`2. started agent session ${agentSessionId}`);

  // The job's thread is keyed by the agent session, so the viewer can resolve its artifact:// links.
  const thread = { jobId: agentSessionId, alias: "main" };
  const post = async (item: ThreadItem) =>
    (await api.post<{ item: ThreadItem }>(`/threads/${thread.jobId}/${thread.alias}/items`, item)).item;
  return { server, api, apiKey, agentSessionId, session, thread, post, step };
}

/** Step 11: the dispatcher kept a hot state across its model calls; each call's prompt was measured. */
async function keepHotState(run: DemoRun, output: string): Promise<DispatcherTurns> {
  const registry = run.server.services.tenant({ kind: "user", id: "demo" }).registry;
  // The server logs a budget violation as a warning, as it must for a real agent; here the
  // violation is scripted, and a newcomer should not read it as the demo failing.
  run.step(
    `    (part of the script: model call ${DEMO_VIOLATION_TURN} inlines a long tool output on purpose, so the ` +
      `server's "[stowage] context budget violated" and "prompt regression" warnings below are expected)`,
  );
  const hotState = await runDispatcherTurns(run.api, registry, run.agentSessionId, output);
  const violations = hotState.turns.filter((turn) => !turn.record.budget_ok).map((turn) => turn.turn);
  check(
    violations.length === 1 && violations[0] === DEMO_VIOLATION_TURN,
    `exactly model call ${DEMO_VIOLATION_TURN} violates the budget`,
  );
  check(hotState.conflict === "CONFLICT", "a stale dispatcher's write is refused");
  run.step(
    `11. the dispatcher kept its hot state through ${hotState.versions} versions (each carrying the previous one's hash; ` +
      `a stale dispatcher got ${hotState.conflict}) and measured ${hotState.turns.length} model calls: ` +
      `hot state ${Math.max(...hotState.turns.map((turn) => turn.record.hs_tokens))} tokens at most, ` +
      `turn ${violations.join(", ")} over the prompt budget`,
  );
  return hotState;
}

export async function runDemo(server: RunningServer, say: (line: string) => void): Promise<DemoResult> {
  const lines: string[] = [];
  const run = await startRun(server, (line) => {
    lines.push(line);
    say(line);
  });

  // 3. A run's thread items, each logged in full by the server before it is fitted and posted.
  await run.post(plainPostItem("The parser rejects trailing commas in argument lists; please fix it."));
  await run.post(
    thinkingItem(
      "The user reports a parser failure with trailing commas. I should run the test suite first to see which case fails, then read parser.ts around argument parsing.",
    ),
  );
  const output = await postLongToolOutput(run);
  const screenshot = demoScreenshot();
  await externalizeScreenshot(run, screenshot);
  await readSubagentOutput(run);

  const workDir = await mkdtemp(join(tmpdir(), "stowage-demo-"));
  try {
    await uploadScreenshot(run, workDir, screenshot);
    await storeContainerSessions(run, workDir);
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }

  const hotState = await keepHotState(run, output);
  const viewerUrl = `${server.services.config.publicUrl}/#key=${encodeURIComponent(run.apiKey)}&session=${run.agentSessionId}`;
  return {
    apiKey: run.apiKey,
    agentSessionId: run.agentSessionId,
    thread: run.thread,
    viewerUrl,
    lines,
    hotState,
  };
}
