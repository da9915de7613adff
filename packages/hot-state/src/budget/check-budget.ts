import { consoleLogger, describeValue, type Logger, StowageError } from "@stowage/core";
import { tokenCountProblem } from "../tokens/token-counter.js";
import { BUDGET_FIELDS, type BudgetField, type ContextBudget, resolveBudget } from "./context-budget.js";

/** A measured amount, or a function that measures it (a throw counts as a violation). */
export type Measure = number | (() => number);

/** What a turn uses, one measure per budget field; fields left out are not checked. */
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

export interface BudgetViolation {
  /** The budget field that is violated. */
  field: BudgetField;
  limit: number;
  /** The measured amount; `null` when it could not be measured. */
  actual: number | null;
  /** `exceeded`: over the limit; `unmeasurable`: the measure threw or was not a non-negative integer. */
  kind: "exceeded" | "unmeasurable";
  message: string;
}

export interface BudgetCheck {
  /** True only when every given measure was read and is within its limit. */
  ok: boolean;
  violations: BudgetViolation[];
}

export interface CheckBudgetOptions {
  budget?: Partial<ContextBudget>;
  /** Where each violation is logged; default `consoleLogger`. */
  logger?: Logger;
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
  const problem = tokenCountProblem(value, "the measure");
  return problem ? { problem } : { value: value as number };
}

/**
 * Checks `usage` against the budget and fails closed: a measure that throws, or that is not a
 * non-negative integer (NaN, negative, fractional, a promise…), counts as a violation. Every
 * violation is returned and logged; none is hidden behind the first.
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
  const logger = options.logger ?? consoleLogger;
  const violations: BudgetViolation[] = [];
  for (const field of BUDGET_FIELDS) {
    const usageField = USAGE_FOR_FIELD[field];
    if (!(usageField in usage) || usage[usageField] === undefined) continue;
    const limit = budget[field];
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
    logger.warn(`context budget violated: ${violation.message}`, {
      field: violation.field,
      limit: violation.limit,
      actual: violation.actual,
      kind: violation.kind,
    });
  }
  return { ok: violations.length === 0, violations };
}
