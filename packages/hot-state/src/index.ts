export { CONTENT_OBJECT, RECORD_OBJECT } from "./artifacts/artifact-keys.js";
export {
  type ArtifactListOptions,
  type ArtifactListPage,
  type ArtifactRegistry,
  type ArtifactRegistryOptions,
  type ArtifactWithContent,
  createArtifactRegistry,
  DEFAULT_ARTIFACT_LIST_LIMIT,
  DEFAULT_MAX_ARTIFACT_BYTES,
  LIST_READ_CONCURRENCY,
  MAX_ARTIFACT_LIST_LIMIT,
  type StoreArtifactOptions,
  type StoredArtifact,
} from "./artifacts/artifact-registry.js";
export { canonicalJson, MAX_JSON_DEPTH } from "./artifacts/canonical-json.js";
export { MAX_RECORD_BYTES } from "./artifacts/record-state.js";
export { BINARY_MIME, JSON_MIME, TEXT_MIME } from "./artifacts/sniff-content.js";
export {
  ARTIFACT_REFS_ENV,
  ARTIFACT_REFS_THRESHOLD_ENV,
  bootstrapOptionsFromEnv,
} from "./bootstrap/bootstrap-env.js";
export {
  BOOTSTRAP_STORE_CONCURRENCY,
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
  BUDGET_FIELDS,
  type BudgetField,
  type ContextBudget,
  DEFAULT_CONTEXT_BUDGET,
  DEFAULT_MAX_ARTIFACT_INDEX_ENTRIES,
  DEFAULT_MAX_HOT_STATE_TOKENS,
  DEFAULT_MAX_INLINE_ARTIFACT_CHARS,
  DEFAULT_MAX_PROMPT_TOKENS,
  DEFAULT_MAX_RAG_CHUNKS,
  resolveBudget,
} from "./budget/context-budget.js";
export { type BuildHotStateOptions, buildHotState, type HotStateBuild } from "./hot-state/build-hot-state.js";
export {
  type CreateHotStateOptions,
  createHotState,
  type HotStateDispatcher,
  type HotStateHandles,
  type HotStateView,
  READER_ROLES,
  type ReaderRole,
} from "./hot-state/hot-state-handles.js";
export {
  MINIMAL_HOT_STATE_FIELDS,
  SHED_ORDER,
  type ShedField,
  type ShedItem,
  type ShedReason,
} from "./hot-state/shed-steps.js";
export {
  DEFAULT_HOT_STATE_WARN_RATIO,
  DEFAULT_INDEX_WARN_RATIO,
  DEFAULT_PROMPT_WARN_RATIO,
  measurePrompt,
  type PromptMetrics,
  type PromptMetricsInput,
  type PromptMetricsOptions,
  type PromptMetricsRecord,
  type PromptWarning,
  type PromptWarningKind,
} from "./metrics/prompt-metrics.js";
export {
  ARTIFACT_PRODUCERS,
  type ArtifactProducer,
  ArtifactProducerSchema,
  type ArtifactRecord,
  ArtifactRecordSchema,
} from "./schemas/artifact-record-schema.js";
export {
  ARTIFACT_TYPES,
  type ArtifactIndexEntry,
  ArtifactIndexEntrySchema,
  type ArtifactType,
  ArtifactTypeSchema,
  type HotState,
  HotStateSchema,
  RISK_LEVELS,
  type RiskLevel,
} from "./schemas/hot-state-schema.js";
export {
  ARTIFACT_INDEX_ENTRY_JSON_SCHEMA,
  ARTIFACT_RECORD_JSON_SCHEMA,
  HOT_STATE_JSON_SCHEMA,
  type JsonSchema,
} from "./schemas/json-schemas.js";
export {
  MAX_ARTIFACT_SUMMARY_CHARS,
  MAX_CONTENT_URI_CHARS,
  MAX_HOT_STATE_LIST_ITEMS,
  MAX_HOT_STATE_TEXT_CHARS,
  MAX_ID_CHARS,
  MAX_LABEL_CHARS,
  MAX_MIME_CHARS,
  MAX_VERSION_CHARS,
} from "./schemas/text-fields.js";
export { countTokensHeuristic } from "./tokens/heuristic-token-counter.js";
export {
  countTokensExact,
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
