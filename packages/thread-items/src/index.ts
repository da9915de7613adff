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
  convertPiSession,
  createPiSessionConverter,
  type PiSessionOptions,
} from "./adapters/pi-session.js";
export {
  DEFAULT_BUDGET_BYTES,
  type FitToBudgetOptions,
  fitToBudget,
  MAX_LOCAL_LOG_PATH_BYTES,
  measureThreadItem,
  THREAD_ITEM_TOO_LARGE,
} from "./budget/fit-to-budget.js";
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
  toolResultItem,
  turnEndItem,
} from "./builders/build-items.js";
export { DEFAULT_FEED_PREFIX } from "./feed/feed-layout.js";
export { DEFAULT_FEED_PAGE_LIMIT, MAX_FEED_PAGE_LIMIT, type PageOptions } from "./feed/listing-page.js";
export {
  createThreadFeeds,
  DUPLICATE_ITEM_ID,
  type PostOptions,
  type ThreadFeeds,
  type ThreadFeedsOptions,
  type ThreadItemPage,
  type ThreadListOptions,
  type ThreadPage,
} from "./feed/thread-feeds.js";
export { THREAD_FAILED, type ThreadFailure, type ThreadInfo } from "./feed/thread-record.js";
export type { SubscribeOptions, ThreadItemListener } from "./feed/thread-subscriptions.js";
export { filterSelf } from "./filter-self.js";
export { type FoldedThreadEntry, type FoldedToolPair, foldToolPairs } from "./fold-tool-pairs.js";
export { THREAD_LOG_FILE_NAME, type ThreadRef } from "./log/thread-layout.js";
export {
  type AppendedItem,
  createThreadLog,
  type ThreadLog,
  type ThreadLogOptions,
  type ThreadLogProblem,
  type ThreadLogRecord,
} from "./log/thread-log.js";
export { MAX_ITEM_ID_LENGTH } from "./schema/item-id.js";
export { isThreadItem, parseThreadItem, threadItemProblem } from "./schema/parse-thread-item.js";
export {
  type AskUserQuestion,
  type PendingPromptItem,
  type PendingPromptResolvedItem,
  type PlainPostItem,
  type Prompt,
  type PromptKind,
  type PromptOutcome,
  promptSchema,
  STATUS_TOKEN_PATTERN,
  type StatusItem,
  type TextItem,
  THREAD_ITEM_JSON_SCHEMA,
  THREAD_ITEM_TYPES,
  type ThinkingItem,
  type ThreadItem,
  type ThreadItemMetadata,
  type ThreadItemType,
  type ToolCallItem,
  type ToolResultItem,
  type TruncatableField,
  type TurnEndItem,
  type TurnStats,
  threadItemMetadataSchema,
  threadItemSchema,
} from "./schema/thread-item-schema.js";
