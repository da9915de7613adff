import { type ContentStore, StowageError } from "@stowage/core";
import type { SessionBlobRecord, SessionBlobSummaryPage } from "@stowage/sessions";
import {
  type ConversationHistory,
  conversationHistory,
  type ThreadFeeds,
  type ThreadItem,
  type ThreadRef,
} from "@stowage/thread-items";
import { type HistoryOptions, historyOptionsOf, storedSessionItems } from "./session-history.js";

/** Listing pages read to find a request's stored sessions (1,000 records each). */
const MAX_LISTING_PAGES = 100;
/** A job thread's items read, newest kept: far more than 50 messages take, even with many tool calls. */
const MAX_THREAD_ITEMS = 20_000;
/** Items per page read from a job thread. */
const THREAD_PAGE = 1_000;

/** Where {@link requestHistory} reads: one principal's stores (a `Tenant` of `@stowage/tenancy` is one). */
export interface RequestHistorySources {
  sessionBlobs: {
    list(options?: {
      cursor?: string;
      limit?: number;
      signal?: AbortSignal;
    }): Promise<SessionBlobSummaryPage>;
    getBySessionId(sessionId: string, options?: { signal?: AbortSignal }): Promise<SessionBlobRecord | null>;
  };
  /** The principal's blob store, where a capture kept as chunks has its chunks. */
  blobs: ContentStore;
  /** The principal's job threads; needed only with `job`. */
  threads?: Pick<ThreadFeeds, "items" | "threads">;
}

export interface RequestHistoryOptions extends HistoryOptions {
  /**
   * A job whose thread is read when no stored session of the request can be: a thread, or a job
   * id (its thread `main`, else the first it has).
   */
  job?: string | ThreadRef;
}

/** A stored session that could not give a history, and why. */
export interface SkippedSession {
  sessionId: string;
  code: string;
  reason?: string;
  message: string;
}

export interface RequestHistory extends ConversationHistory {
  /** What the history was read from. */
  source:
    | { kind: "stored-session"; sessionId: string; agent: string; storedAt: Date }
    | { kind: "job-thread"; jobId: string; alias: string };
  /** The request's stored sessions tried before it, newest first, each with why it could not be read. */
  skipped: SkippedSession[];
}

/** The request's live stored sessions, newest first (listed by the owner, bounded). */
async function storedSessionsOf(
  sources: RequestHistorySources,
  requestId: string,
  signal: AbortSignal | undefined,
) {
  const found: SessionBlobSummaryPage["sessions"] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LISTING_PAGES; page++) {
    const listed = await sources.sessionBlobs.list({
      limit: 1_000,
      ...(cursor === undefined ? {} : { cursor }),
      ...(signal ? { signal } : {}),
    });
    for (const session of listed.sessions) if (session.requestId === requestId) found.push(session);
    cursor = listed.cursor;
    if (cursor === undefined) break;
  }
  return found.sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id - a.id);
}

function skippedOf(sessionId: string, err: unknown): SkippedSession {
  if (StowageError.is(err)) {
    return { sessionId, code: err.code, ...(err.reason ? { reason: err.reason } : {}), message: err.message };
  }
  return { sessionId, code: "INTERNAL", message: err instanceof Error ? err.message : String(err) };
}

/** The job's thread: the one given, else the job's `main`, else its first; undefined when it has none. */
async function threadOf(
  threads: NonNullable<RequestHistorySources["threads"]>,
  job: string | ThreadRef,
  signal?: AbortSignal,
) {
  if (typeof job !== "string") return job;
  const listed = await threads.threads({ jobId: job, ...(signal ? { signal } : {}) });
  const info = listed.threads.find((thread) => thread.alias === "main") ?? listed.threads[0];
  return info ? { jobId: info.jobId, alias: info.alias } : undefined;
}

/** The thread's last {@link MAX_THREAD_ITEMS} items, oldest first. */
async function threadItems(
  threads: NonNullable<RequestHistorySources["threads"]>,
  thread: ThreadRef,
  signal?: AbortSignal,
): Promise<ThreadItem[]> {
  let items: ThreadItem[] = [];
  let cursor: string | undefined;
  do {
    const page = await threads.items(thread, {
      limit: THREAD_PAGE,
      ...(cursor === undefined ? {} : { cursor }),
      ...(signal ? { signal } : {}),
    });
    items.push(...page.items);
    if (items.length > MAX_THREAD_ITEMS * 2) items = items.slice(-MAX_THREAD_ITEMS);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return items.slice(-MAX_THREAD_ITEMS);
}

/**
 * The conversation history of a request for a follow-up prompt, when its stored session cannot be
 * resumed: the request's live stored sessions are tried newest first, each read with every check a
 * restore makes (a corrupt or unreadable one is skipped, and said why in `skipped`); when none can
 * be read, the job thread `job` names (thread items already). Only `sources` is read: a principal's
 * stores see nothing of another's, whose request is NOT_FOUND like one never stored. NOT_FOUND
 * (reason `NO_HISTORY`, `details.skipped`) when nothing gave a history; ABORTED when `signal` fires.
 */
export async function requestHistory(
  sources: RequestHistorySources,
  requestId: string,
  options: RequestHistoryOptions = {},
): Promise<RequestHistory> {
  const { signal, job } = options;
  const fit = historyOptionsOf(options);
  // Options checked before anything is read: a bad one is the caller's error, not a session's.
  conversationHistory([], fit);
  const skipped: SkippedSession[] = [];
  for (const summary of await storedSessionsOf(sources, requestId, signal)) {
    signal?.throwIfAborted();
    try {
      const record = await sources.sessionBlobs.getBySessionId(summary.sessionId, signal ? { signal } : {});
      // The newest record of the session id may be another request's: only this request's is read.
      if (!record || record.requestId !== requestId) {
        skipped.push({
          sessionId: summary.sessionId,
          code: "NOT_FOUND",
          message: "stored again for another request, or expired",
        });
        continue;
      }
      const items = await storedSessionItems(record, { blobs: sources.blobs, ...(signal ? { signal } : {}) });
      return {
        ...conversationHistory(items, fit),
        source: {
          kind: "stored-session",
          sessionId: record.sessionId,
          agent: record.agentType,
          storedAt: record.createdAt,
        },
        skipped,
      };
    } catch (err) {
      if (StowageError.is(err, "ABORTED") || signal?.aborted) throw err;
      skipped.push(skippedOf(summary.sessionId, err));
    }
  }
  if (job !== undefined) {
    if (!sources.threads)
      throw new StowageError("INVALID_INPUT", "job needs sources.threads, the principal's job threads");
    const thread = await threadOf(sources.threads, job, signal);
    const items = thread ? await threadItems(sources.threads, thread, signal) : [];
    if (thread && items.length > 0) {
      return { ...conversationHistory(items, fit), source: { kind: "job-thread", ...thread }, skipped };
    }
  }
  const tried = [
    skipped.length === 0
      ? `no live stored session of request ${requestId}`
      : `${skipped.length} stored session(s) of request ${requestId} unreadable (${skipped.map((each) => `${each.sessionId}: ${each.code}${each.reason ? ` ${each.reason}` : ""}`).join("; ")})`,
    ...(job === undefined
      ? []
      : [`no items in the thread of job ${typeof job === "string" ? job : `${job.jobId}/${job.alias}`}`]),
  ];
  throw new StowageError("NOT_FOUND", `no conversation history: ${tried.join("; ")}`, {
    reason: "NO_HISTORY",
    details: { skipped },
  });
}
