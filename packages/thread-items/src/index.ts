export {
  type ClaudeAgentSdkAdapter,
  type ClaudeAgentSdkAdapterOptions,
  claudeAgentSdkItems,
  createClaudeAgentSdkAdapter,
} from "./adapters/claude-agent-sdk.js";
export {
  type ClaudeCodeTranscriptOptions,
  createClaudeCodeTranscriptConverter,
} from "./adapters/claude-code-transcript.js";
export { type CodexRolloutOptions, createCodexRolloutConverter } from "./adapters/codex-rollout.js";
export {
  type ConversionResult,
  convertTranscript,
  type LineConverter,
  type LineProblem,
} from "./adapters/conversion.js";
export { opencodeExportItems } from "./adapters/opencode-export.js";
export { createPiSessionConverter, type PiSessionOptions } from "./adapters/pi-session.js";
export { type FitToBudgetOptions, fitToBudget } from "./budget/fit-to-budget.js";
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
export type { ThreadItemPage, ThreadListOptions, ThreadPage } from "./feed/feed-pages.js";
export type { PostOptions } from "./feed/feed-post.js";
export type { PageOptions } from "./feed/listing-page.js";
export { createThreadFeeds, type ThreadFeeds, type ThreadFeedsOptions } from "./feed/thread-feeds.js";
export type { ThreadFailure, ThreadInfo } from "./feed/thread-record.js";
export type { SubscribeOptions, ThreadItemListener } from "./feed/thread-subscriptions.js";
export { type FoldedThreadEntry, type FoldedToolPair, foldToolPairs } from "./fold-tool-pairs.js";
export {
  type ConversationHistory,
  type ConversationHistoryOptions,
  conversationHistory,
} from "./history/conversation-history.js";
export type { HistoryMessage, HistoryRole } from "./history/history-messages.js";
export type { ThreadRef } from "./log/thread-layout.js";
export {
  type AppendedItem,
  createThreadLog,
  type ThreadLog,
  type ThreadLogOptions,
  type ThreadLogProblem,
  type ThreadLogRecord,
} from "./log/thread-log.js";
export { isThreadItem, parseThreadItem } from "./schema/parse-thread-item.js";
export type {
  AskUserQuestion,
  PendingPromptItem,
  PendingPromptResolvedItem,
  PlainPostItem,
  Prompt,
  PromptKind,
  PromptOutcome,
  StatusItem,
  TextItem,
  ThinkingItem,
  ThreadItem,
  ThreadItemMetadata,
  ThreadItemType,
  ToolCallItem,
  ToolResultItem,
  TruncatableField,
  TurnEndItem,
  TurnStats,
} from "./schema/thread-item-schema.js";
