/** Runtime exports (values, not types) over every entry point of every published package. */
export const MAX_RUNTIME_EXPORTS = 250;

/** The longest function any package's `src/` may hold, in lines, nested functions included. */
export const MAX_FUNCTION_LINES = 150;

/** Per-package ceilings beyond the shared ones: the packages that were heaviest for their job. */
export const PACKAGE_BUDGETS: Record<string, { maxSourceLines?: number; maxRootRuntimeExports?: number }> = {
  "@stowage/hot-state": { maxSourceLines: 2_500, maxRootRuntimeExports: 40 },
};
