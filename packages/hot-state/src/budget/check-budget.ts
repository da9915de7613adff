import { consoleLogger, describeValue, type Logger } from "@stowage/core";
import { invalidInput } from "../schemas/validation-error.js";
import { countProblem } from "../tokens/token-counter.js";
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
const USAGE_FIELDS: readonly string[] = Object.values(USAGE_FOR_FIELD);

/** One limit that a usage passed, or could not be measured against. */
export interface BudgetViolation {
  field: BudgetField;
  limit: number;
  /** The measured amount; `null` when it could not be measured or was not given. */
  actual: number | null;
  /** `exceeded`; `unmeasurable`: the measure threw or was not a non-negative integer; `missing`: not given. */
  kind: "exceeded" | "unmeasurable" | "missing";
  message: string;
}

/** What `checkBudget` returns: `ok` only when every covered measure was read and is within its limit. */
export interface BudgetCheck {
  ok: boolean;
  violations: BudgetViolation[];
}

/** Options of `checkBudget`. */
export interface CheckBudgetOptions {
  budget?: Partial<ContextBudget>;
  /** The limits this check covers; default every one. A covered limit without a measure is a violation. */
  fields?: readonly BudgetField[];
  /** Where each violation is logged; default `consoleLogger`. */
  logger?: Logger;
}

/** The measure's value, or why it has none. */
function read(measure: unknown, field: BudgetField, limit: number): Omit<BudgetViolation, "field" | "limit"> {
  const usage = USAGE_FOR_FIELD[field];
  let value = measure;
  let problem: string | undefined;
  try {
    if (typeof measure === "function") value = measure();
    problem = countProblem(value, "the measure");
  } catch (err) {
    problem = `the measure threw: ${err instanceof Error ? err.message : describeValue(err)}`;
  }
  if (problem) {
    const message = `${usage} could not be measured (${problem}); ${field} (${limit}) counts as violated`;
    return { actual: null, kind: "unmeasurable", message };
  }
  return {
    actual: value as number,
    kind: "exceeded",
    message: `${usage} is ${value}, over ${field} of ${limit}`,
  };
}

/**
 * Checks `usage` against the budget and fails closed: a measure that is missing (absent or
 * `undefined`, for a limit the check covers), that throws, or that is not a non-negative integer
 * (NaN, negative, fractional, a promise…) counts as a violation. Every violation is returned and
 * logged; none is hidden behind the first.
 */
export function checkBudget(usage: BudgetUsage, options: CheckBudgetOptions = {}): BudgetCheck {
  if (typeof usage !== "object" || usage === null || Array.isArray(usage)) {
    throw invalidInput(`budget usage must be an object, got ${describeValue(usage)}`);
  }
  const unknown = Object.keys(usage).find((key) => !USAGE_FIELDS.includes(key));
  if (unknown !== undefined) {
    throw invalidInput(
      `budget usage has an unknown field ${describeValue(unknown)}; accepted: ${USAGE_FIELDS.join(", ")}`,
    );
  }
  const budget = resolveBudget(options.budget);
  const covered = options.fields ?? BUDGET_FIELDS;
  if (!Array.isArray(covered) || covered.some((field) => !BUDGET_FIELDS.includes(field))) {
    throw invalidInput(
      `fields must be a list of budget fields (${BUDGET_FIELDS.join(", ")}), got ${describeValue(covered)}`,
    );
  }
  const violations: BudgetViolation[] = [];
  for (const field of BUDGET_FIELDS.filter((field) => covered.includes(field))) {
    const limit = budget[field];
    const measure = usage[USAGE_FOR_FIELD[field]];
    if (measure === undefined) {
      const message = `${USAGE_FOR_FIELD[field]} was not measured; ${field} (${limit}) counts as violated`;
      violations.push({ field, limit, actual: null, kind: "missing", message });
      continue;
    }
    const measured = read(measure, field, limit);
    if (measured.actual === null || measured.actual > limit) violations.push({ field, limit, ...measured });
  }
  const logger = options.logger ?? consoleLogger;
  for (const { field, limit, actual, kind, message } of violations) {
    logger.warn({ field, limit, actual, kind }, `context budget violated: ${message}`);
  }
  return { ok: violations.length === 0, violations };
}
