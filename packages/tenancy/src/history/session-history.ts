import { type ContentStore, StowageError } from "@stowage/core";
import { countTokensExact } from "@stowage/hot-state";
import { readSessionFiles, type SessionArchiveManifest, type SessionBlobRecord } from "@stowage/sessions";
import {
  type ConversationHistory,
  conversationHistory,
  opencodeExportItems,
  type ThreadItem,
} from "@stowage/thread-items";
import { convertStoredTranscript } from "./convert-stored-transcript.js";
import { transcriptFiles } from "./transcript-files.js";

/**
 * Tokens a fallback history takes unless told otherwise: about a tenth of a 200k context, room
 * for 50 messages of ordinary length, and no more than a follow-up prompt should spend on what
 * the model is only reminded of.
 */
const DEFAULT_HISTORY_BUDGET_TOKENS = 20_000;

/** How a history is cut; the defaults are the document's 50 messages in 20,000 o200k tokens. */
export interface HistoryOptions {
  /** The last this many messages (1 to 10,000). Default 50, thread-items' `conversationHistory` default. */
  maxMessages?: number;
  /** Tokens the history's text may take. Default 20,000. */
  budgetTokens?: number;
  /** Counts tokens. Default hot-state's `countTokensExact` (o200k). */
  countTokens?: (text: string) => number;
  signal?: AbortSignal;
}

export interface SessionHistoryOptions extends HistoryOptions {
  /** The principal's blob store, where a capture kept as chunks has its chunks. */
  blobs: ContentStore;
}

/** Where the main conversation of a stored session is: the path of its transcript (or export) in the archive. */
function mainTranscriptPath(
  record: SessionBlobRecord,
  manifest?: SessionArchiveManifest,
): string | undefined {
  if (record.agentType === "opencode") return `${record.sessionId}.json`;
  if (record.agentType === "claude-code") return `${record.sessionId}.jsonl`;
  if (record.agentType === "codex") return manifest?.files.find((file) => file.path.endsWith(".jsonl"))?.path;
  return undefined;
}

/** The thread items of a stored session's main conversation, read with every check a restore makes. */
export async function storedSessionItems(
  record: SessionBlobRecord,
  options: { blobs: ContentStore; signal?: AbortSignal },
): Promise<ThreadItem[]> {
  const { blobs, signal } = options;
  // A Codex rollout's path is known from the manifest only: its first .jsonl (subagents' follow).
  let codexMain: string | undefined;
  const read = await readSessionFiles(record, {
    blobs,
    keep: (entry) => {
      if (record.agentType !== "codex") return entry.path === mainTranscriptPath(record);
      if (codexMain === undefined && entry.path.endsWith(".jsonl")) codexMain = entry.path;
      return entry.path === codexMain;
    },
    ...(signal ? { signal } : {}),
  });
  const path = mainTranscriptPath(record, read.manifest);
  const bytes = path === undefined ? undefined : read.files.get(path);
  if (path === undefined || bytes === undefined) {
    throw new StowageError(
      "NOT_FOUND",
      `stored session ${record.sessionId} (${record.agentType}) holds no main transcript to read a history from`,
      { reason: "NO_TRANSCRIPT" },
    );
  }
  if (read.manifest.agent === "opencode") return opencodeExportItems(bytes);
  const main = transcriptFiles(read.manifest, read.files).find((file) => file.role === "main");
  if (!main) {
    throw new StowageError("NOT_FOUND", `stored session ${record.sessionId} has no main transcript`, {
      reason: "NO_TRANSCRIPT",
    });
  }
  const converted = await convertStoredTranscript(bytes, main.format, signal);
  return [...converted.items.values()];
}

/** The history options with their defaults, as `conversationHistory` takes them. */
export function historyOptionsOf(options: HistoryOptions) {
  return {
    // conversationHistory's own default (50) unless given.
    ...(options.maxMessages === undefined ? {} : { maxMessages: options.maxMessages }),
    budgetTokens: options.budgetTokens ?? DEFAULT_HISTORY_BUDGET_TOKENS,
    countTokens: options.countTokens ?? countTokensExact,
  };
}

/**
 * The conversation history of one stored session (document 002's fallback when it cannot be
 * resumed): its files read from the record (chunks from `blobs`) with every check a restore makes,
 * its main transcript (Claude Code's `<sessionId>.jsonl`, the Codex rollout, the OpenCode export)
 * converted by thread-items' adapters, then `conversationHistory` — the last 50 messages in 20,000
 * o200k tokens unless told otherwise. Throws what reading throws (INTEGRITY for a corrupt blob,
 * INVALID_INPUT, TOO_LARGE, UNAVAILABLE), NOT_FOUND (`NO_TRANSCRIPT`) for an archive without one.
 */
export async function sessionHistory(
  record: SessionBlobRecord,
  options: SessionHistoryOptions,
): Promise<ConversationHistory> {
  const items = await storedSessionItems(record, options);
  options.signal?.throwIfAborted();
  return conversationHistory(items, historyOptionsOf(options));
}
