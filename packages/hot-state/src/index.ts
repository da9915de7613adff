export {
  type BootstrapContext,
  type BootstrapFile,
  type BootstrapFileResult,
  type BuildBootstrapContextOptions,
  buildBootstrapContext,
} from "./bootstrap/build-bootstrap-context.js";
export type { BudgetField, ContextBudget } from "./budget/context-budget.js";
export {
  type ContentListOptions,
  type ContentListPage,
  type ContentRegistry,
  type ContentRegistryOptions,
  type ContentWithRecord,
  createContentRegistry,
  type StoreContentOptions,
  type StoredContent,
} from "./content/content-registry.js";
export { type IterateContentRefIdsOptions, iterateContentRefIds } from "./content/record-keys.js";
export type { HotStateStoreEnvOptions } from "./env.js";
export { type BuildHotStateOptions, buildHotState, type HotStateBuild } from "./hot-state/build-hot-state.js";
export type { ShedField, ShedItem, ShedReason } from "./hot-state/shed-steps.js";
export {
  type BudgetCheck,
  measurePrompt,
  type PromptBudget,
  type PromptMetrics,
  type PromptMetricsInput,
  type PromptMetricsOptions,
  promptBudget,
} from "./metrics/prompt-metrics.js";
export {
  createMemoryPromptMetricsLog,
  type MemoryPromptMetricsLogOptions,
} from "./metrics-log/memory-metrics-log.js";
export type {
  AppendPromptMetricsOptions,
  BudgetViolation,
  PromptMetricsEntry,
  PromptMetricsLog,
  PromptMetricsRecord,
  PromptMetricsSeriesOptions,
  PromptWarning,
  PromptWarningKind,
} from "./metrics-log/prompt-metrics-entry.js";
export type {
  ContentKind,
  ContentProducer,
  ContentRecord,
  ContentRef,
  HotState,
  RiskLevel,
} from "./schemas/schemas.js";
export {
  type IterateHotStateContentIdsOptions,
  iterateHotStateContentIds,
} from "./store/hot-state-content-ids.js";
export {
  createHotStateStore,
  type HotStateClaimOptions,
  type HotStateClaimStatus,
  type HotStateDispatcherClaim,
  type HotStateDispatcherOptions,
  type HotStateReader,
  type HotStateStore,
  type HotStateStoreDispatcher,
  type HotStateStoreOptions,
  type HotStateWriteOptions,
} from "./store/hot-state-store.js";
export type { HotStateVersion } from "./store/hot-state-versions.js";
export { countTokensExact, countTokensExactInSlices, type TokenCounter } from "./tokens/token-counter.js";
export {
  type ArtifactsGetInput,
  type ArtifactsGetResult,
  type ArtifactsGetTool,
  type ArtifactsGetToolOptions,
  createArtifactsGetTool,
  type JsonSchema,
  type ToolDefinition,
  toAnthropicTool,
} from "./tool/artifacts-get-tool.js";
