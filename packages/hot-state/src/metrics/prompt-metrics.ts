import { consoleLogger, describeValue, type Logger } from "@stowage/core";
import { z } from "zod";
import { type BudgetCheck, checkBudget } from "../budget/check-budget.js";
import { type ContextBudget, resolveBudget } from "../budget/context-budget.js";
import type { HotStateBuild } from "../hot-state/build-hot-state.js";
import {
  type PromptMetricsRecord,
  type PromptWarning,
  type PromptWarningKind,
  promptMetricsCount,
} from "../metrics-log/prompt-metrics-entry.js";
import { identifier } from "../schemas/text-fields.js";
import { invalidInput, parseOrThrow } from "../schemas/validation-error.js";
import {
  assertTokenCounter,
  countProblem,
  countTokensExact,
  type TokenCounter,
} from "../tokens/token-counter.js";

/** Shares of the limits above which a warning is raised: 800 of 1,000 tokens, 15 of 20 entries, 6,000 of 8,000. */
const DEFAULT_WARN_RATIOS = { hotState: 0.8, index: 0.75, prompt: 0.75 };

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

/** The budget and warning shares of `measurePrompt` and `promptBudget`. */
export interface PromptBudgetOptions {
  budget?: Partial<ContextBudget>;
  /** Shares of the limits above which a warning is raised; default 0.8, 0.75 and 0.75. */
  warnRatios?: { hotState?: number; index?: number; prompt?: number };
}

/** Options of `measurePrompt`; warnings and violations go to `logger` (default `consoleLogger`). */
export interface PromptMetricsOptions extends PromptBudgetOptions {
  countTokens?: TokenCounter;
  logger?: Logger;
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
 * The budget (defaults with `budget` applied) and the warning levels `measurePrompt` uses with
 * it, for a dashboard drawing them. INVALID_INPUT for a bad limit or a ratio outside (0, 1].
 */
export function promptBudget(options: PromptBudgetOptions = {}): PromptBudget {
  const limits = resolveBudget(options.budget);
  const level = (name: keyof typeof DEFAULT_WARN_RATIOS, limit: number) => {
    const ratio = options.warnRatios?.[name] ?? DEFAULT_WARN_RATIOS[name];
    if (typeof ratio !== "number" || !(ratio > 0 && ratio <= 1)) {
      throw invalidInput(
        `warnRatios.${name} must be a number above 0 and at most 1, got ${describeValue(ratio)}`,
      );
    }
    return Math.floor(limit * ratio);
  };
  const warningLevels = Object.freeze({
    hot_state_tokens: level("hotState", limits.maxHotStateTokens),
    artifact_index_entries: level("index", limits.maxArtifactIndexEntries),
    prompt_tokens: level("prompt", limits.maxPromptTokens),
  });
  return Object.freeze({ limits, warningLevels });
}

/**
 * Measures one model call: the `prompt_metrics` record, a budget check (fail closed: a counter
 * that throws leaves `est_tokens` null and counts as a violation), and regression warnings when
 * the hot state, the index or the prompt pass their share of the configured limits. Warnings and
 * violations are logged; the record is returned for the caller to emit.
 */
export function measurePrompt(input: PromptMetricsInput, options: PromptMetricsOptions = {}): PromptMetrics {
  const { limits, warningLevels } = promptBudget(options);
  const counter = options.countTokens ?? countTokensExact;
  assertTokenCounter(counter);
  const logger = options.logger ?? consoleLogger;
  const { sessionId, runId, hotState, systemPrompt, userPrompt, refFiles } = parseOrThrow(
    InputSchema,
    input,
    "prompt metrics input",
  );
  const types = (hotState.state.artifact_index ?? []).map((entry) => entry.type);
  const { ragChunks, inlineArtifactChars } = input;

  let estTokens: number | null = null;
  // Each count is checked before the two are added: 50 + (−10) must not pass as 40.
  const count = (text: string, what: string) => {
    const counted: unknown = counter(text);
    const problem = countProblem(counted, `the counter (${what})`);
    if (problem) throw new Error(problem);
    return counted as number;
  };
  const budget = checkBudget(
    {
      hotStateTokens: hotState.tokens,
      artifactIndexEntries: types.length,
      promptTokens: () => {
        estTokens = count(systemPrompt, "system prompt") + count(userPrompt, "user prompt");
        return estTokens;
      },
      ...(ragChunks === undefined ? {} : { ragChunks }),
      ...(inlineArtifactChars === undefined ? {} : { inlineArtifactChars }),
    },
    {
      budget: limits,
      logger,
      // RAG chunks and inline artifacts are checked when the call reports them; the rest always.
      fields: [
        "maxHotStateTokens",
        "maxArtifactIndexEntries",
        "maxPromptTokens",
        ...(ragChunks === undefined ? [] : (["maxRagChunks"] as const)),
        ...(inlineArtifactChars === undefined ? [] : (["maxInlineArtifactChars"] as const)),
      ],
    },
  );
  if (budget.violations.some(({ field, actual }) => field === "maxPromptTokens" && actual === null)) {
    estTokens = null;
  }

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
    budget_violations: budget.violations.length,
    budget_ok: budget.ok,
  };
  const measured: [PromptWarningKind, number | null, number, string][] = [
    ["hot_state_tokens", record.hs_tokens, warningLevels.hot_state_tokens, "hot state tokens"],
    [
      "artifact_index_entries",
      record.artifacts,
      warningLevels.artifact_index_entries,
      "artifact index entries",
    ],
    ["prompt_tokens", record.est_tokens, warningLevels.prompt_tokens, "estimated prompt tokens"],
    ["budget_violations", record.budget_violations, 0, "budget violations"],
  ];
  const warnings: PromptWarning[] = [];
  for (const [kind, value, threshold, what] of measured) {
    if (value === null || value <= threshold) continue;
    const message = `${what} is ${value}, above the warning level of ${threshold}`;
    warnings.push({ kind, message, value, threshold });
    logger.warn(
      { kind, value, threshold },
      `prompt regression in session ${describeValue(sessionId)}: ${message}`,
    );
  }
  return { record, warnings, budget };
}
