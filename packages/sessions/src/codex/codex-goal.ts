import { describeValue, StowageError } from "@stowage/core";
import { type CodexCliOptions, callCodexAppServer } from "./codex-app-server.js";

/** The archive entry holding the thread's goal, as `thread/goal/get` answered it. */
export const CODEX_GOAL_ENTRY = "~codex/goal.json";

/** A goal entry larger than this is refused (Codex's own goals are a sentence or a paragraph). */
export const MAX_CODEX_GOAL_BYTES = 64 * 1024;

/** The statuses Codex 0.169.0's `ThreadGoalStatus` schema lists. */
const GOAL_STATUSES = ["active", "paused", "blocked", "usageLimited", "budgetLimited", "complete"] as const;

/**
 * A Codex thread's goal (Codex 0.169.0's `ThreadGoal`, from `codex app-server
 * generate-json-schema`): what `thread/goal/set` takes again. Codex counts `tokensUsed` and
 * `timeUsedSeconds` itself; they are kept in the entry but cannot be set again.
 */
export interface CodexGoal {
  threadId: string;
  objective: string;
  status: (typeof GOAL_STATUSES)[number];
  tokenBudget: number | null;
  tokensUsed?: number;
  timeUsedSeconds?: number;
  createdAt?: number;
  updatedAt?: number;
}

/** Whether a capture read the thread's goal through `codex app-server`, and what it found. */
export type CodexGoalCapture = { read: true; goal: CodexGoal | null } | { read: false; reason: string };

/** Whether a restore set the archived goal again through `codex app-server`. */
export type CodexGoalRestore =
  | { set: true; goal: CodexGoal }
  | { set: false; reason: string; goal: CodexGoal };

function invalidGoal(why: string, reason = "CODEX_GOAL_INVALID"): StowageError {
  return new StowageError("INVALID_INPUT", `${CODEX_GOAL_ENTRY} ${why}`, {
    reason,
    details: { path: CODEX_GOAL_ENTRY },
  });
}

/**
 * The goal `value` holds, checked against `ThreadGoal`'s schema and to be `sessionId`'s thread:
 * INVALID_INPUT (reason `CODEX_GOAL_INVALID`, or `FOREIGN_ENTRY` for another thread's goal).
 */
export function checkCodexGoal(value: unknown, sessionId: string): CodexGoal {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidGoal(`must be a JSON object (a ThreadGoal), got ${describeValue(value)}`);
  }
  const goal = value as Record<string, unknown>;
  if (goal.threadId !== sessionId) {
    throw invalidGoal(
      `is the goal of thread ${describeValue(goal.threadId)}, not of session ${sessionId}; a restore never sets another thread's goal`,
      "FOREIGN_ENTRY",
    );
  }
  if (typeof goal.objective !== "string" || goal.objective.trim() === "") {
    throw invalidGoal(`has no objective (a non-empty string), got ${describeValue(goal.objective)}`);
  }
  if (!GOAL_STATUSES.includes(goal.status as CodexGoal["status"])) {
    throw invalidGoal(`has status ${describeValue(goal.status)}, not one of ${GOAL_STATUSES.join(", ")}`);
  }
  const budget = goal.tokenBudget ?? null;
  if (budget !== null && (!Number.isSafeInteger(budget) || (budget as number) <= 0)) {
    throw invalidGoal(`has tokenBudget ${describeValue(budget)}, not a positive integer or null`);
  }
  return { ...(goal as unknown as CodexGoal), tokenBudget: budget as number | null };
}

/** The goal an archive's `~codex/goal.json` holds: JSON, at most 64 KiB, of `sessionId`'s thread. */
export function parseCodexGoalEntry(bytes: Uint8Array, sessionId: string): CodexGoal {
  if (bytes.byteLength > MAX_CODEX_GOAL_BYTES) {
    throw new StowageError(
      "TOO_LARGE",
      `${CODEX_GOAL_ENTRY} is ${bytes.byteLength} bytes, over the limit of ${MAX_CODEX_GOAL_BYTES} bytes`,
      { details: { path: CODEX_GOAL_ENTRY, limit: MAX_CODEX_GOAL_BYTES, size: bytes.byteLength } },
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (err) {
    throw invalidGoal(`is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  return checkCodexGoal(value, sessionId);
}

/** The goal of `threadId` in `codexHome`, through `thread/goal/get`; null when it has none. */
export async function readCodexGoal(
  cli: CodexCliOptions,
  codexHome: string,
  threadId: string,
  signal?: AbortSignal,
): Promise<CodexGoal | null> {
  const [answer] = await callCodexAppServer(
    cli,
    codexHome,
    [{ method: "thread/goal/get", params: { threadId } }],
    signal,
  );
  const goal = (answer as { goal?: unknown } | undefined)?.goal ?? null;
  return goal === null ? null : checkCodexGoal(goal, threadId);
}

/**
 * Sets `goal` on its thread in `codexHome` through `thread/goal/set` (never writing Codex's
 * SQLite itself), and returns the goal Codex then holds.
 */
export async function setCodexGoal(
  cli: CodexCliOptions,
  codexHome: string,
  goal: CodexGoal,
  signal?: AbortSignal,
): Promise<CodexGoal> {
  const { threadId, objective, status, tokenBudget } = goal;
  const [answer] = await callCodexAppServer(
    cli,
    codexHome,
    [{ method: "thread/goal/set", params: { threadId, objective, status, tokenBudget } }],
    signal,
  );
  return checkCodexGoal((answer as { goal?: unknown } | undefined)?.goal, threadId);
}
