import { consoleLogger, describeValue, type Logger, StowageError } from "@stowage/core";
import { type BudgetCheck, checkBudget, countProblem } from "../budget/check-budget.js";
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
/**
 * The largest count a `prompt_metrics` record holds (2^31 − 1, PostgreSQL's `integer`), so that
 * every metrics log keeps the same records: a larger one is refused as INVALID_INPUT everywhere.
 */
export const MAX_PROMPT_METRICS_COUNT = 2_147_483_647;

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

/** What a prompt warning is about. */
export type PromptWarningKind =
  | "hot_state_tokens"
  | "artifact_index_entries"
  | "prompt_tokens"
  | "budget_violations";

/** A limit approached or passed by one prompt. */
export interface PromptWarning {
  kind: PromptWarningKind;
  message: string;
  value: number;
  /** The value above which this warning is raised. */
  threshold: number;
}

/** What `measurePrompt` measures: one model call's prompt. */
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

/** Options of `measurePrompt`. */
export interface PromptMetricsOptions {
  budget?: Partial<ContextBudget>;
  countTokens?: TokenCounter;
  /** Shares of the limits above which a warning is raised; defaults as the constants above. */
  warnRatios?: { hotState?: number; index?: number; prompt?: number };
  /** Where warnings and violations are logged. Default `consoleLogger`. */
  logger?: Logger;
}

/** What `measurePrompt` returns: the metrics line, its warnings and the budget check. */
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

function assertCount(value: unknown, what: string): asserts value is number {
  if (
    typeof value !== "number" ||
    !Number.isInteger(value) ||
    value < 0 ||
    value > MAX_PROMPT_METRICS_COUNT
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `${what} must be a whole number from 0 to ${MAX_PROMPT_METRICS_COUNT}, got ${describeValue(value)}`,
    );
  }
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
  // Every value that lands in the record is checked here, so a record is valid for every log.
  assertCount(hotState.tokens, "hotState.tokens");
  assertCount(hotState.bytes, "hotState.bytes");
  if (typeof hotState.truncated !== "boolean") {
    throw new StowageError(
      "INVALID_INPUT",
      `hotState.truncated must be true or false, got ${describeValue(hotState.truncated)}`,
    );
  }
  const refFiles = input.refFiles ?? 0;
  assertCount(refFiles, "refFiles");
  const index: unknown = hotState.state.artifact_index ?? [];
  if (
    !Array.isArray(index) ||
    index.some((entry) => typeof entry !== "object" || entry === null || typeof entry.type !== "string")
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `hotState.state.artifact_index must be a list of content refs, got ${describeValue(index)}`,
    );
  }

  let estTokens: number | null = null;
  // Each count is checked before the two are added: 50 + (−10) must not pass as 40.
  const count = (text: string, what: string) => {
    const counted: unknown = counter(text);
    const problem = countProblem(counted, `the counter (${what})`);
    if (problem) throw new Error(problem);
    return counted as number;
  };
  const estimate = () => {
    estTokens = count(input.systemPrompt, "system prompt") + count(input.userPrompt, "user prompt");
    return estTokens;
  };
  const optional = {
    ...(input.ragChunks === undefined ? {} : { ragChunks: input.ragChunks }),
    ...(input.inlineArtifactChars === undefined ? {} : { inlineArtifactChars: input.inlineArtifactChars }),
  };
  const check = checkBudget(
    {
      hotStateTokens: hotState.tokens,
      artifactIndexEntries: index.length,
      promptTokens: estimate,
      ...optional,
    },
    {
      budget,
      logger,
      // RAG chunks and inline artifacts are checked when the call reports them; the rest always.
      fields: [
        "maxHotStateTokens",
        "maxArtifactIndexEntries",
        "maxPromptTokens",
        ...(input.ragChunks === undefined ? [] : (["maxRagChunks"] as const)),
        ...(input.inlineArtifactChars === undefined ? [] : (["maxInlineArtifactChars"] as const)),
      ],
    },
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
    artifact_types: [...new Set(index.map((entry: { type: string }) => entry.type))].sort(),
    sys_chars: input.systemPrompt.length,
    user_chars: input.userPrompt.length,
    est_tokens: estTokens,
    ref_files: refFiles,
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
    logger.warn(
      {
        kind: warning.kind,
        value: warning.value,
        threshold: warning.threshold,
      },
      `prompt regression in session ${describeValue(session)}: ${warning.message}`,
    );
  }
  return { record, warnings, budget: check };
}
