// The dispatcher's side of the demo: a hot state kept through the API across the run's model
// calls (every write based on the version it read), and each call's prompt measured and logged.
import { StowageError } from "@stowage/core";
import type {
  ContentKind,
  ContentRef,
  ContentRegistry,
  HotStateVersion,
  PromptMetricsEntry,
} from "@stowage/hot-state";
import type { ApiClient } from "./api-client.js";

/** The model call whose prompt the demo makes too large, so the plot shows a violation. */
export const DEMO_VIOLATION_TURN = 4;
/** Model calls the demo's dispatcher makes. */
export const DEMO_TURNS = 6;

export interface DispatcherTurns {
  versions: number;
  turns: PromptMetricsEntry[];
  /** What the second, stale dispatcher got when it wrote on an old version. */
  conflict: string;
}

interface Step {
  user: string;
  decision?: string;
  question?: string;
  step: string;
  content?: { text: string; type: ContentKind; label: string; summary: string };
}

/**
 * Runs {@link DEMO_TURNS} model calls of the dispatcher of session `sessionId`. It first claims
 * the session's dispatcher role (its agents hold the same API key; only the token writes). Before
 * each call it updates the hot state (PUT with the version it read, so a lost race is a 409 and
 * never an overwrite), adds content refs it produced to the index, then reports the call's prompt
 * for measuring, with the hot-state version the prompt carried. Call {@link DEMO_VIOLATION_TURN}
 * inlines a large tool output by mistake.
 */
export async function runDispatcherTurns(
  api: ApiClient,
  registry: ContentRegistry,
  sessionId: string,
  toolOutput: string,
): Promise<DispatcherTurns> {
  const base = `/sessions/${sessionId}`;
  const steps: Step[] = [
    { user: "The parser rejects trailing commas in argument lists; please fix it.", step: "read the report" },
    {
      user: "Run the tests first.",
      step: "ran npm test: 1 failure",
      content: {
        text: toolOutput.slice(-4000),
        type: "log",
        label: "npm test (tail)",
        summary: "1 failed: trailing comma",
      },
    },
    {
      user: "Where are arguments parsed?",
      decision: "fix parseArguments() rather than the tokenizer",
      step: "found parseArguments() in src/parser.ts:212",
      content: {
        text: JSON.stringify({
          summary: "argument lists are parsed in parseArguments()",
          findings: [{ file: "src/parser.ts", line: 212 }],
        }),
        type: "result",
        label: "Explore findings",
        summary: "parseArguments() at src/parser.ts:212",
      },
    },
    {
      user: "Show me the whole test output again.",
      question: "should trailing commas also be accepted in parameter lists?",
      step: "pasted the test output into the prompt",
    },
    {
      user: "Apply the fix.",
      decision: "accept one trailing comma before the closing parenthesis",
      step: "patched parseArguments()",
      content: {
        text: "--- a/src/parser.ts\n+++ b/src/parser.ts\n@@ -212 +212 @@\n-    if (peek() === ',') expect(')')\n+    if (peek() === ',') { next(); if (peek() === ')') break }\n",
        type: "code",
        label: "parser.patch",
        summary: "one trailing comma allowed",
      },
    },
    { user: "Run the tests again.", step: "npm test: all passed" },
  ];

  const { dispatcher_token } = await api.post<{ dispatcher_token: string }>(
    `${base}/hot-state/dispatcher`,
    {},
  );
  let latest = null as HotStateVersion | null;
  const turns: PromptMetricsEntry[] = [];
  for (const [index, step] of steps.entries()) {
    const previous: HotStateVersion["state"] | undefined = latest?.state;
    const index_: ContentRef[] = [...(previous?.artifact_index ?? [])];
    if (step.content) {
      const { record } = await registry.storeText(step.content.text, {
        type: step.content.type,
        summary: step.content.summary,
        producer: "dispatcher",
      });
      index_.push({ artifact_id: record.artifact_id, type: step.content.type, label: step.content.label });
    }
    const expectedVersion: number = latest?.version ?? 0;
    latest = await api.put<HotStateVersion>(`${base}/hot-state`, {
      dispatcher_token,
      expected_version: expectedVersion,
      state: {
        session_id: sessionId,
        run_id: "demo-run",
        objective: "Accept trailing commas in argument lists",
        constraints: ["keep the parser free of backtracking"],
        accepted_decisions: [
          ...(previous?.accepted_decisions ?? []),
          ...(step.decision ? [step.decision] : []),
        ],
        open_questions: [...(previous?.open_questions ?? []), ...(step.question ? [step.question] : [])],
        last_successful_step: step.step,
        risk_level: index === DEMO_VIOLATION_TURN - 1 ? "medium" : "low",
        artifact_index: index_,
      },
    });
    // The call's prompt: the hot state, then (on the bad turn) 40,000 characters of raw output.
    const pasted =
      index === DEMO_VIOLATION_TURN - 1 ? `\n\nTest output:\n${toolOutput.slice(0, 40_000)}` : "";
    const hotStateJson: string = latest.json;
    const { entry } = await api.post<{ entry: PromptMetricsEntry }>(`${base}/prompt-metrics`, {
      run_id: "demo-run",
      hot_state_version: latest.version,
      system_prompt: `You are the dispatcher of a coding agent.\n\nHot state:\n${hotStateJson}${pasted}`,
      user_prompt: step.user,
    });
    turns.push(entry);
  }

  // A second dispatcher (same token) that still holds version 1 tries to write: it must lose, not overwrite.
  let conflict = "none";
  try {
    await api.put(`${base}/hot-state`, {
      dispatcher_token,
      expected_version: 1,
      state: { session_id: sessionId },
    });
  } catch (err) {
    if (!StowageError.is(err, "CONFLICT")) throw err;
    conflict = err.code;
  }
  return { versions: latest?.version ?? 0, turns, conflict };
}
