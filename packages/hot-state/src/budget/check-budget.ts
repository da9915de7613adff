import { consoleLogger, describeValue, type Logger, StowageError } from "@stowage/core";
import { tokenCountProblem } from "../tokens/token-counter.js";
import { BUDGET_FIELDS, type BudgetField, type ContextBudget, resolveBudget } from "./context-budget.js";

/** A measured amount, or a function that measures it (a throw counts as a violation). */
export type Measure = number | (() => number);

/**
 * What a turn uses, one measure per budget field. Every field the check covers (all of them
 * unless `CheckBudgetOptions.fields` says otherwise) must be given: a missing one is a violation.
 */
export interface BudgetUsage {
  hotStateTokens?: Measure;
  artifactIndexEntries?: Measure;
  promptTokens?: Measure;
  ragChunks?: Measure;
  /** The longest artifact sent inline, in characters. */
  inlineArtifactChars?: Measure;
}

const USAGE_FOR_FIELD: Readonly<Record<BudgetField, keyof BudgetUsage>> = {
  maxHotStateTokens: "hotStateTokens",
  maxArtifactIndexEntries: "artifactIndexEntries",
  maxPromptTokens: "promptTokens",
  maxRagChunks: "ragChunks",
  maxInlineArtifactChars: "inlineArtifactChars",
};
const USAGE_FIELDS = new Set<string>(Object.values(USAGE_FOR_FIELD));

/** One limit that a usage passed, or could not be measured against. */
export interface BudgetViolation {
  /** The budget field that is violated. */
  field: BudgetField;
  limit: number;
  /** The measured amount; `null` when it could not be measured or was not given. */
  actual: number | null;
  /**
   * `exceeded`: over the limit; `unmeasurable`: the measure threw or was not a non-negative
   * integer; `missing`: the check covers the limit but no measure was given for it.
   */
  kind: "exceeded" | "unmeasurable" | "missing";
  message: string;
}

/** What `checkBudget` returns. */
export interface BudgetCheck {
  /** True only when every given measure was read and is within its limit. */
  ok: boolean;
  violations: BudgetViolation[];
}

/** Options of `checkBudget`. */
export interface CheckBudgetOptions {
  budget?: Partial<ContextBudget>;
  /**
   * The limits this check covers; default every one ({@link BUDGET_FIELDS}). Leaving a limit out
   * must be said here: a covered limit without a measure is a violation, never a pass.
   */
  fields?: readonly BudgetField[];
  /** Where each violation is logged; default `consoleLogger`. */
  logger?: Logger;
}

/**
 * Why `value` is not a usable count (a finite, non-negative integer), or undefined when it is.
 * NaN and the infinities are named as such (JSON would print them as `null`).
 */
export function countProblem(value: unknown, source: string): string | undefined {
  if (typeof value === "number" && !Number.isFinite(value)) {
    return `${source} returned ${String(value)}, not a non-negative integer`;
  }
  return tokenCountProblem(value, source);
}

function read(measure: unknown): { value: number } | { problem: string } {
  let value: unknown = measure;
  if (typeof measure === "function") {
    try {
      value = measure();
    } catch (err) {
      return { problem: `the measure threw: ${err instanceof Error ? err.message : describeValue(err)}` };
    }
  }
  const problem = countProblem(value, "the measure");
  return problem ? { problem } : { value: value as number };
}

function coveredFields(fields: unknown): readonly BudgetField[] {
  if (fields === undefined) return BUDGET_FIELDS;
  if (!Array.isArray(fields) || fields.some((field) => !BUDGET_FIELDS.includes(field as BudgetField))) {
    throw new StowageError(
      "INVALID_INPUT",
      `fields must be a list of budget fields (${BUDGET_FIELDS.join(", ")}), got ${describeValue(fields)}`,
    );
  }
  return fields as BudgetField[];
}

/**
 * Checks `usage` against the budget and fails closed: a measure that is missing (absent or
 * `undefined`, for a limit the check covers), that throws, or that is not a non-negative integer
 * (NaN, negative, fractional, a promise…) counts as a violation. Every violation is returned and
 * logged; none is hidden behind the first.
 */
export function checkBudget(usage: BudgetUsage, options: CheckBudgetOptions = {}): BudgetCheck {
  if (typeof usage !== "object" || usage === null || Array.isArray(usage)) {
    throw new StowageError("INVALID_INPUT", `budget usage must be an object, got ${describeValue(usage)}`);
  }
  for (const key of Object.keys(usage)) {
    if (!USAGE_FIELDS.has(key)) {
      throw new StowageError(
        "INVALID_INPUT",
        `budget usage has an unknown field ${describeValue(key)}; accepted: ${[...USAGE_FIELDS].join(", ")}`,
      );
    }
  }
  const budget = resolveBudget(options.budget);
  const covered = coveredFields(options.fields);
  const logger = options.logger ?? consoleLogger;
  const violations: BudgetViolation[] = [];
  for (const field of BUDGET_FIELDS) {
    if (!covered.includes(field)) continue;
    const usageField = USAGE_FOR_FIELD[field];
    const limit = budget[field];
    if (usage[usageField] === undefined) {
      violations.push({
        field,
        limit,
        actual: null,
        kind: "missing",
        message: `${usageField} was not measured; ${field} (${limit}) counts as violated`,
      });
      continue;
    }
    const measured = read(usage[usageField]);
    if ("problem" in measured) {
      violations.push({
        field,
        limit,
        actual: null,
        kind: "unmeasurable",
        message: `${usageField} could not be measured (${measured.problem}); ${field} (${limit}) counts as violated`,
      });
    } else if (measured.value > limit) {
      violations.push({
        field,
        limit,
        actual: measured.value,
        kind: "exceeded",
        message: `${usageField} is ${measured.value}, over ${field} of ${limit}`,
      });
    }
  }
  for (const violation of violations) {
    logger.warn(
      {
        field: violation.field,
        limit: violation.limit,
        actual: violation.actual,
        kind: violation.kind,
      },
      `context budget violated: ${violation.message}`,
    );
  }
  return { ok: violations.length === 0, violations };
}
