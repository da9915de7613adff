import { consoleLogger, describeValue, type Logger, StowageError } from "@stowage/core";
import { type BudgetCheck, checkBudget } from "../budget/check-budget.js";
import { type ContextBudget, resolveBudget } from "../budget/context-budget.js";
import type { HotStateBuild } from "../hot-state/build-hot-state.js";
import { identifier } from "../schemas/text-fields.js";
import { parseOrThrow } from "../schemas/validation-error.js";
import { assertTokenCounter, DEFAULT_TOKEN_COUNTER, type TokenCounter } from "../tokens/token-counter.js";

/** Warn when the hot state uses more than this share of `maxHotStateTokens` (800 of 1,000). */
export const DEFAULT_HOT_STATE_WARN_RATIO = 0.8;
/** Warn when the index holds more than this share of `maxArtifactIndexEntries` (15 of 20). */
export const DEFAULT_INDEX_WARN_RATIO = 0.75;
/** Warn when the estimated prompt uses more than this share of `maxPromptTokens` (6,000 of 8,000). */
export const DEFAULT_PROMPT_WARN_RATIO = 0.75;

/** One model call, as a JSON log record. */
export interface PromptMetricsRecord {
  type: "prompt_metrics";
  session: string;
  run: string | null;
  hs_tokens: number;
  hs_bytes: number;
  hs_truncated: boolean;
  /** Entries in the hot state's artifact index. */
  artifacts: number;
  /** Distinct types in the index, sorted. */
  artifact_types: string[];
  sys_chars: number;
  user_chars: number;
  /** Estimated prompt tokens (system + user); `null` when the counter failed. */
  est_tokens: number | null;
  /** Bootstrap files sent as ArtifactRef. */
  ref_files: number;
  budget_violations: number;
  budget_ok: boolean;
}

export type PromptWarningKind =
  | "hot_state_tokens"
  | "artifact_index_entries"
  | "prompt_tokens"
  | "budget_violations";

export interface PromptWarning {
  kind: PromptWarningKind;
  message: string;
  value: number;
  /** The value above which this warning is raised. */
  threshold: number;
}

export interface PromptMetricsInput {
  sessionId: string;
  runId?: string;
  /** The hot state sent with this call, as `buildHotState` returned it. */
  hotState: Pick<HotStateBuild, "state" | "tokens" | "bytes" | "truncated">;
  systemPrompt: string;
  userPrompt: string;
  /** Bootstrap files sent as ArtifactRef (`BootstrapContext.refFiles`). Default 0. */
  refFiles?: number;
  /** Retrieved chunks in this call, checked against `maxRagChunks` when given. */
  ragChunks?: number;
  /** Largest artifact sent inline, checked against `maxInlineArtifactChars` when given. */
  inlineArtifactChars?: number;
}

export interface PromptMetricsOptions {
  budget?: Partial<ContextBudget>;
  countTokens?: TokenCounter;
  /** Shares of the limits above which a warning is raised; defaults as the constants above. */
  warnRatios?: { hotState?: number; index?: number; prompt?: number };
  /** Where warnings and violations are logged. Default `consoleLogger`. */
  logger?: Logger;
}

export interface PromptMetrics {
  record: PromptMetricsRecord;
  warnings: PromptWarning[];
  budget: BudgetCheck;
}

function ratio(value: unknown, what: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !(value > 0 && value <= 1)) {
    throw new StowageError(
      "INVALID_INPUT",
      `${what} must be a number above 0 and at most 1, got ${describeValue(value)}`,
    );
  }
  return value;
}

function assertString(value: unknown, what: string): asserts value is string {
  if (typeof value !== "string")
    throw new StowageError("INVALID_INPUT", `${what} must be a string, got ${describeValue(value)}`);
}

/**
 * Measures one model call: the `prompt_metrics` record, a budget check (fail closed: a counter
 * that throws leaves `est_tokens` null and counts as a violation), and regression warnings when
 * the hot state, the index or the prompt pass their share of the configured limits. Warnings and
 * violations are logged; the record is returned for the caller to emit.
 */
export function measurePrompt(input: PromptMetricsInput, options: PromptMetricsOptions = {}): PromptMetrics {
  const budget = resolveBudget(options.budget);
  const counter = options.countTokens ?? DEFAULT_TOKEN_COUNTER;
  assertTokenCounter(counter);
  const logger = options.logger ?? consoleLogger;
  const hotStateRatio = ratio(
    options.warnRatios?.hotState,
    "warnRatios.hotState",
    DEFAULT_HOT_STATE_WARN_RATIO,
  );
  const indexRatio = ratio(options.warnRatios?.index, "warnRatios.index", DEFAULT_INDEX_WARN_RATIO);
  const promptRatio = ratio(options.warnRatios?.prompt, "warnRatios.prompt", DEFAULT_PROMPT_WARN_RATIO);

  const session = parseOrThrow(identifier(), input?.sessionId, "sessionId");
  const run = input.runId === undefined ? null : parseOrThrow(identifier(), input.runId, "runId");
  assertString(input.systemPrompt, "systemPrompt");
  assertString(input.userPrompt, "userPrompt");
  const hotState = input.hotState;
  if (!hotState || typeof hotState.state !== "object" || hotState.state === null) {
    throw new StowageError(
      "INVALID_INPUT",
      `hotState must be a buildHotState result, got ${describeValue(hotState)}`,
    );
  }
  const index = hotState.state.artifact_index ?? [];

  let estTokens: number | null = null;
  const estimate = () => {
    estTokens = counter(input.systemPrompt) + counter(input.userPrompt);
    return estTokens;
  };
  const check = checkBudget(
    {
      hotStateTokens: hotState.tokens,
      artifactIndexEntries: index.length,
      promptTokens: estimate,
      ...(input.ragChunks === undefined ? {} : { ragChunks: input.ragChunks }),
      ...(input.inlineArtifactChars === undefined ? {} : { inlineArtifactChars: input.inlineArtifactChars }),
    },
    { budget, logger },
  );
  if (
    check.violations.some((violation) => violation.field === "maxPromptTokens" && violation.actual === null)
  ) {
    estTokens = null;
  }

  const record: PromptMetricsRecord = {
    type: "prompt_metrics",
    session,
    run,
    hs_tokens: hotState.tokens,
    hs_bytes: hotState.bytes,
    hs_truncated: hotState.truncated,
    artifacts: index.length,
    artifact_types: [...new Set(index.map((entry) => entry.type))].sort(),
    sys_chars: input.systemPrompt.length,
    user_chars: input.userPrompt.length,
    est_tokens: estTokens,
    ref_files: input.refFiles ?? 0,
    budget_violations: check.violations.length,
    budget_ok: check.ok,
  };

  const warnings: PromptWarning[] = [];
  const warnAbove = (kind: PromptWarningKind, value: number | null, threshold: number, what: string) => {
    if (value !== null && value > threshold) {
      warnings.push({
        kind,
        value,
        threshold,
        message: `${what} is ${value}, above the warning level of ${threshold}`,
      });
    }
  };
  warnAbove(
    "hot_state_tokens",
    record.hs_tokens,
    Math.floor(budget.maxHotStateTokens * hotStateRatio),
    "hot state tokens",
  );
  warnAbove(
    "artifact_index_entries",
    record.artifacts,
    Math.floor(budget.maxArtifactIndexEntries * indexRatio),
    "artifact index entries",
  );
  warnAbove(
    "prompt_tokens",
    record.est_tokens,
    Math.floor(budget.maxPromptTokens * promptRatio),
    "estimated prompt tokens",
  );
  warnAbove("budget_violations", record.budget_violations, 0, "budget violations");
  for (const warning of warnings) {
    logger.warn(`prompt regression in session ${describeValue(session)}: ${warning.message}`, {
      kind: warning.kind,
      value: warning.value,
      threshold: warning.threshold,
    });
  }
  return { record, warnings, budget: check };
}
