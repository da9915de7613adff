import { consoleLogger, describeValue, type Logger } from "@stowage/core";
import { z } from "zod";
import { type BudgetField, type ContextBudget, resolveBudget } from "../budget/context-budget.js";
import type { HotStateBuild } from "../hot-state/build-hot-state.js";
import {
  type BudgetViolation,
  type PromptMetricsRecord,
  type PromptWarning,
  type PromptWarningKind,
  promptMetricsCount,
} from "../metrics-log/prompt-metrics-entry.js";
import { identifier, parseOrThrow } from "../schemas/schemas.js";
import {
  assertTokenCounter,
  countProblem,
  countTokensExact,
  type TokenCounter,
} from "../tokens/token-counter.js";

/** One model call's prompt; `ragChunks` and `inlineArtifactChars` are checked against the budget when given. */
export interface PromptMetricsInput {
  sessionId: string;
  runId?: string;
  /** The hot state sent with this call, as `buildHotState` returned it. */
  hotState: Pick<HotStateBuild, "state" | "tokens" | "bytes" | "truncated">;
  systemPrompt: string;
  userPrompt: string;
  /** Bootstrap files sent as ArtifactRef (`BootstrapContext.refFiles`). Default 0. */
  refFiles?: number;
  ragChunks?: number;
  /** Largest artifact sent inline. */
  inlineArtifactChars?: number;
}

// Every value that lands in the record is checked, so that a record is valid for every log.
const InputSchema = z.object({
  sessionId: identifier(),
  runId: identifier().optional(),
  hotState: z.object({
    state: z.object({ artifact_index: z.array(z.object({ type: z.string() })).optional() }),
    tokens: promptMetricsCount,
    bytes: promptMetricsCount,
    truncated: z.boolean(),
  }),
  systemPrompt: z.string(),
  userPrompt: z.string(),
  refFiles: promptMetricsCount.default(0),
});

/** Options of `measurePrompt`; warnings and violations go to `logger` (default `consoleLogger`). */
export interface PromptMetricsOptions {
  budget?: Partial<ContextBudget>;
  countTokens?: TokenCounter;
  logger?: Logger;
}

/** The budget check of one call: `ok` only when every limit checked was measured and held. */
export interface BudgetCheck {
  ok: boolean;
  violations: BudgetViolation[];
}

/** What `measurePrompt` returns: the metrics line, its warnings and the budget check. */
export interface PromptMetrics {
  record: PromptMetricsRecord;
  warnings: PromptWarning[];
  budget: BudgetCheck;
}

/** The limits a prompt is checked against, and the levels above which its measures are warned of. */
export interface PromptBudget {
  limits: Readonly<ContextBudget>;
  warningLevels: Readonly<Record<Exclude<PromptWarningKind, "budget_violations">, number>>;
}

/**
 * The budget (defaults with `budget` applied) and the warning levels `measurePrompt` uses with it
 * (80 % of the hot-state tokens, 75 % of the index entries and of the prompt tokens), for a
 * dashboard drawing them. INVALID_INPUT for a bad limit.
 */
export function promptBudget(budget?: Partial<ContextBudget>): PromptBudget {
  const limits = resolveBudget(budget);
  const level = (field: BudgetField, share: number) => Math.floor(limits[field] * share);
  const warningLevels = Object.freeze({
    hot_state_tokens: level("maxHotStateTokens", 0.8),
    artifact_index_entries: level("maxArtifactIndexEntries", 0.75),
    prompt_tokens: level("maxPromptTokens", 0.75),
  });
  return Object.freeze({ limits, warningLevels });
}

/** The violation of `field` by `measure()`, or null; one that throws or is no count is `unmeasurable`. */
function violationOf(field: BudgetField, limit: number, measure: () => unknown): BudgetViolation | null {
  let value: unknown;
  let problem: string | undefined;
  try {
    value = measure();
    problem = countProblem(value, "the measure");
  } catch (err) {
    problem = `the measure threw: ${err instanceof Error ? err.message : describeValue(err)}`;
  }
  // What the limit bounds, named as the field without its `max`: `maxRagChunks` bounds `ragChunks`.
  const usage = `${field[3]!.toLowerCase()}${field.slice(4)}`;
  if (problem) {
    const message = `${usage} could not be measured (${problem}); ${field} (${limit}) counts as violated`;
    return { field, limit, actual: null, kind: "unmeasurable", message };
  }
  const actual = value as number;
  return actual > limit
    ? { field, limit, actual, kind: "exceeded", message: `${usage} is ${actual}, over ${field} of ${limit}` }
    : null;
}

/**
 * Measures one model call: its `prompt_metrics` record, a budget check that fails closed (a counter
 * that throws leaves `est_tokens` null and is a violation) and warnings when the hot state, the
 * index or the prompt pass their share of the limits, each logged. The caller emits the record.
 */
export function measurePrompt(input: PromptMetricsInput, options: PromptMetricsOptions = {}): PromptMetrics {
  const { limits, warningLevels } = promptBudget(options.budget);
  const counter = options.countTokens ?? countTokensExact;
  assertTokenCounter(counter);
  const logger = options.logger ?? consoleLogger;
  const checked = parseOrThrow(InputSchema, input, "prompt metrics input");
  const { sessionId, runId, hotState, systemPrompt, userPrompt, refFiles } = checked;
  const types = (hotState.state.artifact_index ?? []).map((entry) => entry.type);
  // Each count is checked before the two are added: 50 + (−10) must not pass as 40.
  const count = (text: string, what: string) => {
    const counted: unknown = counter(text);
    const problem = countProblem(counted, `the counter (${what})`);
    if (problem) throw new Error(problem);
    return counted as number;
  };
  let estTokens: number | null = null;
  const prompt = () => (estTokens = count(systemPrompt, "system prompt") + count(userPrompt, "user prompt"));
  const measures: [BudgetField, () => unknown][] = [
    ["maxHotStateTokens", () => hotState.tokens],
    ["maxArtifactIndexEntries", () => types.length],
    ["maxPromptTokens", prompt],
  ];
  if (input.ragChunks !== undefined) measures.push(["maxRagChunks", () => input.ragChunks]);
  if (input.inlineArtifactChars !== undefined)
    measures.push(["maxInlineArtifactChars", () => input.inlineArtifactChars]);
  const violations = measures.flatMap(([field, measure]) => violationOf(field, limits[field], measure) ?? []);
  for (const { field, limit, actual, kind, message } of violations)
    logger.warn({ field, limit, actual, kind }, `context budget violated: ${message}`);
  if (violations.some(({ field, actual }) => field === "maxPromptTokens" && actual === null))
    estTokens = null;

  const record: PromptMetricsRecord = {
    type: "prompt_metrics",
    session: sessionId,
    run: runId ?? null,
    hs_tokens: hotState.tokens,
    hs_bytes: hotState.bytes,
    hs_truncated: hotState.truncated,
    artifacts: types.length,
    artifact_types: [...new Set(types)].sort(),
    sys_chars: systemPrompt.length,
    user_chars: userPrompt.length,
    est_tokens: estTokens,
    ref_files: refFiles,
    budget_violations: violations.length,
    budget_ok: violations.length === 0,
  };
  const measured: [PromptWarningKind, number | null, string][] = [
    ["hot_state_tokens", record.hs_tokens, "hot state tokens"],
    ["artifact_index_entries", record.artifacts, "artifact index entries"],
    ["prompt_tokens", record.est_tokens, "estimated prompt tokens"],
    ["budget_violations", record.budget_violations, "budget violations"],
  ];
  const warnings: PromptWarning[] = [];
  for (const [kind, value, what] of measured) {
    const threshold = kind === "budget_violations" ? 0 : warningLevels[kind];
    if (value === null || value <= threshold) continue;
    const message = `${what} is ${value}, above the warning level of ${threshold}`;
    warnings.push({ kind, message, value, threshold });
    const logged = `prompt regression in session ${describeValue(sessionId)}: ${message}`;
    logger.warn({ kind, value, threshold }, logged);
  }
  return { record, warnings, budget: { ok: record.budget_ok, violations } };
}
