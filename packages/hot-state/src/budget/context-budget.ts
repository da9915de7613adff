import { describeValue, StowageError } from "@stowage/core";

/** Hard limits that keep a prompt small. Every limit is a non-negative integer. */
export interface ContextBudget {
  /** Tokens of the hot-state JSON. */
  maxHotStateTokens: number;
  /** Entries in the hot state's `artifact_index`. */
  maxArtifactIndexEntries: number;
  /** Estimated tokens of the whole prompt (system + user). */
  maxPromptTokens: number;
  /** Retrieved chunks per turn. */
  maxRagChunks: number;
  /** Characters an artifact may have inline before it must be sent as a reference. */
  maxInlineArtifactChars: number;
}

/** Default {@link ContextBudget.maxHotStateTokens}. */
export const DEFAULT_MAX_HOT_STATE_TOKENS = 1_000;
/** Default {@link ContextBudget.maxArtifactIndexEntries}. */
export const DEFAULT_MAX_ARTIFACT_INDEX_ENTRIES = 20;
/** Default {@link ContextBudget.maxPromptTokens}. */
export const DEFAULT_MAX_PROMPT_TOKENS = 8_000;
/** Default {@link ContextBudget.maxRagChunks}. */
export const DEFAULT_MAX_RAG_CHUNKS = 10;
/** Default {@link ContextBudget.maxInlineArtifactChars}. */
export const DEFAULT_MAX_INLINE_ARTIFACT_CHARS = 2_000;

/** The budget used where none is given. */
export const DEFAULT_CONTEXT_BUDGET: Readonly<ContextBudget> = Object.freeze({
  maxHotStateTokens: DEFAULT_MAX_HOT_STATE_TOKENS,
  maxArtifactIndexEntries: DEFAULT_MAX_ARTIFACT_INDEX_ENTRIES,
  maxPromptTokens: DEFAULT_MAX_PROMPT_TOKENS,
  maxRagChunks: DEFAULT_MAX_RAG_CHUNKS,
  maxInlineArtifactChars: DEFAULT_MAX_INLINE_ARTIFACT_CHARS,
});

export type BudgetField = keyof ContextBudget;

/** The budget's fields, in the order violations are reported. */
export const BUDGET_FIELDS: readonly BudgetField[] = Object.freeze(
  Object.keys(DEFAULT_CONTEXT_BUDGET) as BudgetField[],
);

/**
 * The defaults with `overrides` applied. Throws INVALID_INPUT for an unknown field or a limit
 * that is not a non-negative integer, so that a typo never turns a limit off.
 */
export function resolveBudget(overrides: Partial<ContextBudget> = {}): Readonly<ContextBudget> {
  if (typeof overrides !== "object" || overrides === null || Array.isArray(overrides)) {
    throw new StowageError("INVALID_INPUT", `budget must be an object, got ${describeValue(overrides)}`);
  }
  const budget: ContextBudget = { ...DEFAULT_CONTEXT_BUDGET };
  for (const [field, value] of Object.entries(overrides)) {
    if (!BUDGET_FIELDS.includes(field as BudgetField)) {
      throw new StowageError(
        "INVALID_INPUT",
        `budget has an unknown field ${describeValue(field)}; accepted: ${BUDGET_FIELDS.join(", ")}`,
      );
    }
    if (value === undefined) continue;
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
      throw new StowageError(
        "INVALID_INPUT",
        `budget.${field} must be a non-negative integer, got ${describeValue(value)}`,
      );
    }
    budget[field as BudgetField] = value;
  }
  return Object.freeze(budget);
}
