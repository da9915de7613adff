import { DEFAULT_CONTEXT_BUDGET } from "../budget/context-budget.js";

/**
 * Files of at least this many characters are stored and referenced instead of inlined: one more
 * than the default budget's `maxInlineArtifactChars` (2,000), so a file the default budget would
 * refuse inline is referenced instead (2,001).
 */
export const DEFAULT_BOOTSTRAP_THRESHOLD_CHARS = DEFAULT_CONTEXT_BUDGET.maxInlineArtifactChars + 1;
