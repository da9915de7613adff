/** Runtime exports (values, not types) over every entry point of every published package. */
export const MAX_RUNTIME_EXPORTS = 250;

/** The longest function any package's `src/` may hold, in lines, nested functions included. */
export const MAX_FUNCTION_LINES = 150;

/** Per-package ceilings beyond the shared ones: the packages that were heaviest for their job. */
export const PACKAGE_BUDGETS: Record<string, { maxSourceLines?: number; maxRootRuntimeExports?: number }> = {
  // Issue 28's target is 2,500 lines; 2,902 is where it stands (2026-11-29: 5,068, then 3,538, then
  // the ObjectStore metrics log, storeJson and the heuristic counter left, then the slicing helper
  // and summarizePromptMetrics). The budget is a ratchet at today's figure, so lint fails on growth
  // while the cut to 2,500 is still open.
  "@stowage/hot-state": { maxSourceLines: 2_902, maxRootRuntimeExports: 40 },
};
