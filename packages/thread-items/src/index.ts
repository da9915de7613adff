export {
  type ClaudeAgentSdkAdapter,
  type ClaudeAgentSdkAdapterOptions,
  claudeAgentSdkItems,
  createClaudeAgentSdkAdapter,
} from "./adapters/claude-agent-sdk.js";
export {
  type ClaudeCodeTranscriptOptions,
  convertClaudeCodeTranscript,
  createClaudeCodeTranscriptConverter,
} from "./adapters/claude-code-transcript.js";
export {
  type CodexRolloutOptions,
  convertCodexRollout,
  createCodexRolloutConverter,
} from "./adapters/codex-rollout.js";
export type { ConversionResult, LineConverter, LineProblem } from "./adapters/conversion.js";
export {
  DEFAULT_BUDGET_BYTES,
  type FitToBudgetOptions,
  fitToBudget,
  MAX_LOCAL_LOG_PATH_BYTES,
  measureThreadItem,
  THREAD_ITEM_TOO_LARGE,
  TRUNCATION_HEAD_BYTES,
  TRUNCATION_TAIL_BYTES,
} from "./budget/fit-to-budget.js";
export { truncationMarker } from "./budget/truncation-marker.js";
export { BRIEF_LINE_MAX_CHARS, THINKING_BRIEF_CHARS } from "./builders/brief-text.js";
export {
  type ItemIdentity,
  type PendingPromptInput,
  type PendingPromptResolvedInput,
  pendingPromptItem,
  pendingPromptResolvedItem,
  plainPostItem,
  type StatusInput,
  statusItem,
  type ToolCallInput,
  type ToolResultInput,
  type TurnEndInput,
  textItem,
  thinkingItem,
  toolCallItem,
  toolResultBrief,
  toolResultItem,
  turnEndItem,
} from "./builders/build-items.js";
export { summarizeToolInput } from "./builders/tool-summary.js";
export { filterSelf } from "./filter-self.js";
export { type FoldedThreadEntry, type FoldedToolPair, foldToolPairs } from "./fold-tool-pairs.js";
export { LOG_READ_CHUNK_BYTES } from "./log/line-scanner.js";
export {
  type AppendedItem,
  createThreadLog,
  THREAD_LOG_FILE_NAME,
  type ThreadLog,
  type ThreadLogOptions,
  type ThreadLogProblem,
  type ThreadLogRecord,
} from "./log/thread-log.js";
export { assertItemId, itemIdProblem, MAX_ITEM_ID_LENGTH, MAX_PATH_ID_LENGTH } from "./schema/ids.js";
export {
  isThreadItem,
  parseThreadItem,
  promptProblem,
  threadItemProblem,
} from "./schema/parse-thread-item.js";
export * from "./schema/thread-item-schema.js";
