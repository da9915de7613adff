export { type BootstrapEnvOptions, bootstrapOptionsFromEnv } from "./bootstrap/bootstrap-env.js";
export {
  type BootstrapContext,
  type BootstrapFile,
  type BootstrapFileResult,
  type BuildBootstrapContextOptions,
  buildBootstrapContext,
  DEFAULT_BOOTSTRAP_EXCERPT_CHARS,
  DEFAULT_BOOTSTRAP_THRESHOLD_CHARS,
  MAX_BOOTSTRAP_FILES,
} from "./bootstrap/build-bootstrap-context.js";
export {
  type BudgetCheck,
  type BudgetUsage,
  type BudgetViolation,
  type CheckBudgetOptions,
  checkBudget,
  type Measure,
} from "./budget/check-budget.js";
export {
  type BudgetField,
  type ContextBudget,
  DEFAULT_CONTEXT_BUDGET,
} from "./budget/context-budget.js";
export { MAX_JSON_DEPTH } from "./content/canonical-json.js";
export { type IterateContentRefIdsOptions, iterateContentRefIds } from "./content/content-ref-ids.js";
export {
  type ContentListOptions,
  type ContentListPage,
  type ContentRegistry,
  type ContentRegistryOptions,
  type ContentWithRecord,
  createContentRegistry,
  DEFAULT_MAX_CONTENT_BYTES,
  MAX_CONTENT_LIST_LIMIT,
  type StoreContentOptions,
  type StoredContent,
} from "./content/content-registry.js";
export { type BuildHotStateOptions, buildHotState, type HotStateBuild } from "./hot-state/build-hot-state.js";
export {
  type CreateHotStateOptions,
  createHotState,
  type HotStateDispatcher,
  type HotStateHandles,
  type HotStateView,
  type ReaderRole,
} from "./hot-state/hot-state-handles.js";
export { SHED_ORDER, type ShedField, type ShedItem, type ShedReason } from "./hot-state/shed-steps.js";
export {
  DEFAULT_HOT_STATE_WARN_RATIO,
  DEFAULT_INDEX_WARN_RATIO,
  DEFAULT_PROMPT_WARN_RATIO,
  MAX_PROMPT_METRICS_COUNT,
  measurePrompt,
  type PromptMetrics,
  type PromptMetricsInput,
  type PromptMetricsOptions,
  type PromptMetricsRecord,
  type PromptWarning,
  type PromptWarningKind,
} from "./metrics/prompt-metrics.js";
export {
  createFsPromptMetricsLog,
  type FsPromptMetricsLogOptions,
} from "./metrics-log/fs-metrics-log.js";
export {
  createPromptMetricsLog,
  DEFAULT_PROMPT_METRICS_PREFIX,
  MAX_PROMPT_METRICS_TURN,
  type PromptMetricsLogOptions,
} from "./metrics-log/object-store-metrics-log.js";
export {
  type AppendPromptMetricsOptions,
  PROMPT_WARNING_KINDS,
  type PromptMetricsEntry,
  type PromptMetricsEntryPlace,
  PromptMetricsEntrySchema,
  type PromptMetricsLog,
  type PromptMetricsSeriesOptions,
  type PromptMetricsSeriesWindow,
  promptMetricsSeriesWindow,
  toPromptMetricsEntry,
} from "./metrics-log/prompt-metrics-entry.js";
export {
  type MeasureSummary,
  type PromptMetricsSummary,
  summarizePromptMetrics,
} from "./metrics-log/summarize-prompt-metrics.js";
export {
  type ContentProducer,
  type ContentRecord,
  ContentRecordSchema,
} from "./schemas/content-record-schema.js";
export {
  CONTENT_KINDS,
  type ContentKind,
  type ContentRef,
  ContentRefSchema,
  type HotState,
  HotStateSchema,
  type RiskLevel,
} from "./schemas/hot-state-schema.js";
export {
  CONTENT_RECORD_JSON_SCHEMA,
  CONTENT_REF_JSON_SCHEMA,
  HOT_STATE_JSON_SCHEMA,
  type JsonSchema,
} from "./schemas/json-schemas.js";
export {
  MAX_CONTENT_SUMMARY_CHARS,
  MAX_HOT_STATE_LIST_ITEMS,
  MAX_HOT_STATE_TEXT_CHARS,
  MAX_ID_CHARS,
  MAX_LABEL_CHARS,
  MAX_VERSION_CHARS,
} from "./schemas/text-fields.js";
export {
  type IterateHotStateContentIdsOptions,
  iterateHotStateContentIds,
} from "./store/hot-state-content-ids.js";
export { type HotStateStoreEnvOptions, hotStateStoreOptionsFromEnv } from "./store/hot-state-env.js";
export {
  createHotStateStore,
  DEFAULT_HOT_STATE_PREFIX,
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
export { type HotStateVersion, MAX_HOT_STATE_VERSION } from "./store/hot-state-versions.js";
export { countTokensHeuristic } from "./tokens/heuristic-token-counter.js";
export {
  countTokensExact,
  countTokensExactInSlices,
  DEFAULT_TOKEN_COUNTER,
  type TokenCounter,
} from "./tokens/token-counter.js";
export {
  ARTIFACTS_GET_TOOL_NAME,
  type ArtifactsGetInput,
  type ArtifactsGetResult,
  type ArtifactsGetTool,
  type ArtifactsGetToolOptions,
  createArtifactsGetTool,
  DEFAULT_TOOL_MAX_CHARS,
  MIN_TOOL_MAX_CHARS,
  TOOL_NAME_PATTERN,
} from "./tool/artifacts-get-tool.js";
export {
  type ToolDefinition,
  toAnthropicTool,
  toOpenAIResponsesTool,
  toOpenAITool,
} from "./tool/tool-formats.js";
