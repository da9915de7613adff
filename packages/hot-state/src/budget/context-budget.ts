import { describeValue, StowageError } from "@stowage/core";

/** Hard limits that keep a prompt small, each a non-negative integer (defaults in the README). */
export interface ContextBudget {
  maxHotStateTokens: number;
  maxArtifactIndexEntries: number;
  /** Estimated tokens of the whole prompt (system + user). */
  maxPromptTokens: number;
  /** Retrieved chunks per turn. */
  maxRagChunks: number;
  /** Characters a file may have inline before it must be sent as a content ref. */
  maxInlineArtifactChars: number;
}

/** The budget used where none is given (here without zod: the settings readers use it). */
export const DEFAULT_CONTEXT_BUDGET: Readonly<ContextBudget> = Object.freeze({
  maxHotStateTokens: 1_000,
  maxArtifactIndexEntries: 20,
  maxPromptTokens: 8_000,
  maxRagChunks: 10,
  maxInlineArtifactChars: 2_000,
});

/**
 * Bootstrap files of at least this many characters are referenced instead of inlined: one more
 * than the default `maxInlineArtifactChars`, so a file that budget would refuse inline is referenced.
 */
export const DEFAULT_BOOTSTRAP_THRESHOLD_CHARS = DEFAULT_CONTEXT_BUDGET.maxInlineArtifactChars + 1;

/** A limit of the {@link ContextBudget}. */
export type BudgetField = keyof ContextBudget;

/** The budget's fields, in the order violations are reported. */
export const BUDGET_FIELDS = Object.freeze(Object.keys(DEFAULT_CONTEXT_BUDGET) as BudgetField[]);

/** The defaults with `overrides` applied; INVALID_INPUT for an unknown field or a bad limit (a typo never turns a limit off). */
export function resolveBudget(overrides: Partial<ContextBudget> = {}): Readonly<ContextBudget> {
  const invalid = (problem: string, value: unknown) =>
    new StowageError("INVALID_INPUT", `budget${problem}, got ${describeValue(value)}`);
  if (typeof overrides !== "object" || overrides === null || Array.isArray(overrides))
    throw invalid(" must be an object", overrides);
  const budget: ContextBudget = { ...DEFAULT_CONTEXT_BUDGET };
  for (const [field, value] of Object.entries(overrides)) {
    if (!BUDGET_FIELDS.includes(field as BudgetField))
      throw invalid(` has an unknown field (accepted: ${BUDGET_FIELDS.join(", ")})`, field);
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 0)
      throw invalid(`.${field} must be a non-negative integer`, value);
    budget[field as BudgetField] = value;
  }
  return Object.freeze(budget);
}
