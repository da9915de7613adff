import { scanBytesForBlobRefs, scanFilesForBlobRefs, scanObjectStoreForBlobRefs } from "@stowage/blob-store";
import { StowageError } from "@stowage/core";
import {
  createContentRegistry,
  createHotStateStore,
  iterateContentRefIds,
  iterateHotStateContentIds,
} from "@stowage/hot-state";
import { decompressBounded, iterateSessionBlobs, type SessionBlobRepository } from "@stowage/sessions";
import { createObjectCheckpointSaver } from "@stowage/sessions/langgraph";
import { createThreadFeeds } from "@stowage/thread-items";
import { AGENT_SDK_PREFIX, openAgentSdkSessions, sweepAgentSdkTrash } from "./agent-sdk-sessions.js";
import { auditExpiredSessionBlobs, sweepUploads } from "./audited-sweeps.js";
import { bindAgentsSessions } from "./bound-agents-sessions.js";
import { bindSessionBlobs } from "./bound-session-blobs.js";
import { bindUploads } from "./bound-uploads.js";
import { agentSessionsOf } from "./shared/agent-sessions.js";
import { SESSION_ACTIVITY_PREFIX, sessionActivityOf } from "./shared/session-activity.js";
import { type Deployment, defineStore } from "./store-definition.js";
import {
  hideTrashedActivity,
  hideTrashedHotState,
  hideTrashedSessionFiles,
  hideTrashedThreads,
  trashCheckOf,
} from "./trash/hide-trashed.js";
import { hideTrashedAgentsSessions, hideTrashedCheckpointSaver } from "./trash/hide-trashed-frameworks.js";
import { trashGraceMsOf } from "./trash/trash.js";

/** A store that needs a part of the deployment it was not given fails at once, naming it. */
function needs<Key extends "sessionBlobs" | "uploads" | "promptMetricsFor">(
  deployment: Deployment,
  key: Key,
): NonNullable<Deployment[Key]> {
  const value = deployment[key];
  if (value === undefined) {
    throw new StowageError(
      "INVALID_INPUT",
      `the ${key} store needs \`${key}\` in createStowage's options; leave the store out of \`stores\` where the deployment has none`,
    );
  }
  return value as NonNullable<Deployment[Key]>;
}

/**
 * The refs inside every stored session archive. Each archive decompresses to the size recorded
 * with it; one that claims less than it holds fails (TOO_LARGE) and stops the collection rather
 * than being scanned in part.
 */
export async function* sessionBlobRefs(repository: SessionBlobRepository): AsyncGenerator<string> {
  for await (const record of iterateSessionBlobs(repository)) {
    const bytes = decompressBounded(record.blob, record.codec, { maxBytes: record.rawSizeBytes });
    yield* scanBytesForBlobRefs(bytes);
  }
}

/**
 * Batches of expired stored sessions one sweep run deletes at most (the repository's 1,000 rows
 * each): a backlog is worked off over several runs instead of holding one run for long.
 */
const SESSION_BLOB_SWEEP_BATCHES = 100;

/** Where the upload service keeps every principal's sessions in its store. */
const UPLOADS_PREFIX = "sessions/";

/**
 * The stores every principal of a Stowage deployment has, one row each, in the order a session's
 * deletion goes through them: hot state first (a claimed session is deleted only by its
 * dispatcher, before anything else changes), then its uploads (their URLs revoked), threads,
 * prompt metrics, stored sessions, their capture/restore activity, LangGraph checkpoints, OpenAI
 * Agents sessions, Agent SDK transcripts and session files. Pass `{ ...DEFAULT_STORES, mine }` to `createStowage` to add a store: it is then opened
 * for every principal, deleted with every session and read as a root by garbage collection, with
 * no other change.
 */
export const DEFAULT_STORES = {
  /** Content refs of bootstrap context: records here, content in the principal's blobs. */
  registry: defineStore({
    prefix: "content-refs/",
    open: ({ deployment, namespace, blobs }) =>
      createContentRegistry({
        content: blobs,
        records: deployment.shared,
        prefix: `content-refs/${namespace}/`,
      }),
    deleteSession: "principal-wide",
    blobRefs: ({ deployment }) =>
      iterateContentRefIds({ records: deployment.shared, prefix: "content-refs/" }),
  }),

  /** The dispatcher's hot state of each session, versioned. */
  hotState: defineStore({
    prefix: "hot-state/",
    open: ({ deployment, namespace, registeredSessions }) =>
      hideTrashedHotState(
        createHotStateStore({
          store: deployment.shared,
          prefix: `hot-state/${namespace}/`,
          ...deployment.hotState,
        }),
        trashCheckOf(registeredSessions),
      ),
    async checkDeletion(hotState, sessionId, { dispatcherToken, signal }) {
      const options = {
        ...(dispatcherToken === undefined ? {} : { token: dispatcherToken }),
        ...(signal ? { signal } : {}),
      };
      if ((await hotState.claimStatus(sessionId, options)) === "other") {
        throw new StowageError("FORBIDDEN", `only the dispatcher of session ${sessionId} deletes it`, {
          reason: "NOT_DISPATCHER",
          details: { sessionId },
        });
      }
    },
    // The dispatcher's role ends when its session goes to the trash (as when it is deleted): the
    // purge then needs no token, and a restored session is claimed again.
    async onTrash(hotState, sessionId, { dispatcherToken, signal }) {
      if (dispatcherToken === undefined) return;
      const options = { token: dispatcherToken, ...(signal ? { signal } : {}) };
      if ((await hotState.claimStatus(sessionId, options)) === "held") {
        await hotState.releaseDispatcher(sessionId, options);
      }
    },
    sessionPrefixes: (namespace, sessionId) => [`hot-state/${namespace}/${sessionId}/`],
    // Refused (FORBIDDEN) only when a claim was made since the check; its holder deletes the session.
    deleteSession: (hotState, sessionId, { dispatcherToken, signal }) =>
      hotState.deleteSession(sessionId, {
        ...(dispatcherToken === undefined ? {} : { token: dispatcherToken }),
        ...(signal ? { signal } : {}),
      }),
    // Every version's refs in its text, and its artifact_index ids (which outlive the content
    // records they were made from).
    async *blobRefs({ deployment }) {
      yield* scanObjectStoreForBlobRefs(deployment.shared, { prefix: "hot-state/" });
      yield* iterateHotStateContentIds({ store: deployment.shared, prefix: "hot-state/" });
    },
  }),

  /** Files put into a session through signed URLs; deleting the session revokes its URLs. */
  uploads: defineStore({
    open: ({ deployment, principal, registeredSessions }) =>
      bindUploads(needs(deployment, "uploads"), principal, registeredSessions),
    deleteSession: (uploads, sessionId, { signal }) =>
      uploads.deleteSession(sessionId, signal ? { signal } : {}),
    // In the trash its uploads stay in the quota ledger: the trash counts against the quota.
    trashBytes: (uploads, sessionId, { signal }) => uploads.bytes(sessionId, signal ? { signal } : {}),
    // Uploaded files that embed refs (a JSON log, a session export).
    blobRefs: ({ deployment }) =>
      scanObjectStoreForBlobRefs(needs(deployment, "uploads").store, { prefix: UPLOADS_PREFIX }),
    // What revoked URLs wrote after their session's deletion (S3 cannot refuse it) goes at every
    // sweep; uploads past their retention only where the deployment keeps them for a time.
    sweep: (deployment, context) => sweepUploads(needs(deployment, "uploads"), deployment, context),
  }),

  /** Job threads: posted items and their full payloads, live through the notifier. */
  threads: defineStore({
    prefix: "threads/",
    open: ({ deployment, namespace, registeredSessions }) =>
      hideTrashedThreads(
        createThreadFeeds({
          store: deployment.shared,
          prefix: `threads/${namespace}`,
          notifier: deployment.notifier,
          redactSecrets: deployment.redactSecrets ?? true,
        }),
        trashCheckOf(registeredSessions),
      ),
    // A session's threads are those of the job whose id is the session's.
    deleteSession: (threads, sessionId, { signal }) => threads.deleteJob(sessionId, signal ? { signal } : {}),
    sessionPrefixes: (namespace, sessionId) =>
      ["index", "items", "full"].map((part) => `threads/${namespace}/${part}/${sessionId}/`),
  }),

  /** Prompt metrics of each model call, in the deployment's database (`promptMetricsFor`). */
  promptMetrics: defineStore({
    open: ({ deployment, owner }) => needs(deployment, "promptMetricsFor")(owner),
    deleteSession: (metrics, sessionId, { signal }) =>
      metrics.deleteSession(sessionId, signal ? { signal } : {}),
    // Token counts and budgets: numbers, never content.
    blobRefs: "none",
  }),

  /** Captured sessions stored between container runs, bound to their owner. */
  sessionBlobs: defineStore({
    open: ({ deployment, owner, registeredSessions }) =>
      bindSessionBlobs(needs(deployment, "sessionBlobs"), owner, registeredSessions),
    // Every record of its id, whatever request it was stored for, expired ones too.
    deleteSession: (sessionBlobs, sessionId, { signal }) =>
      sessionBlobs.deleteForSession(sessionId, signal ? { signal } : {}),
    trashBytes: (sessionBlobs, sessionId, { signal }) =>
      sessionBlobs.bytes(sessionId, signal ? { signal } : {}),
    // Every owner's archives, read decompressed.
    blobRefs: ({ deployment }) => sessionBlobRefs(needs(deployment, "sessionBlobs")),
    // Bounded batches (the repository's); each batch's records go to their owners' audits
    // before the next batch is deleted.
    sweep: (deployment, { audit, signal }) =>
      needs(deployment, "sessionBlobs").deleteExpired({
        maxBatches: SESSION_BLOB_SWEEP_BATCHES,
        // An expired stored session waits in its owner's trash (listed, restorable) this long.
        graceMs: trashGraceMsOf(deployment.trashDays),
        ...(signal ? { signal } : {}),
        onDeleted: (records) => auditExpiredSessionBlobs(records, audit),
      }),
  }),

  /**
   * The last capture and the last restore of each request's stored session (ids, agent, counts,
   * sizes, duration): what the app's activity route and viewer show.
   */
  sessionActivity: defineStore({
    prefix: SESSION_ACTIVITY_PREFIX,
    open: ({ deployment, principal, registeredSessions }) =>
      hideTrashedActivity(
        sessionActivityOf(deployment.shared, SESSION_ACTIVITY_PREFIX, principal),
        trashCheckOf(registeredSessions),
      ),
    // Every record naming the session, whatever request it was for.
    deleteSession: (activity, sessionId, { signal }) =>
      activity.deleteForSession(sessionId, signal ? { signal } : {}),
    // Ids and numbers, never content.
    blobRefs: "none",
  }),

  /**
   * LangGraph.js checkpoints: the principal's saver (pass it as a graph's `checkpointer`), its
   * thread ids the principal's session ids; images and binary in its blobs.
   */
  langgraphCheckpoints: defineStore({
    prefix: "langgraph/",
    open: ({ deployment, namespace, blobs, registeredSessions }) =>
      hideTrashedCheckpointSaver(
        createObjectCheckpointSaver({ store: deployment.shared, prefix: `langgraph/${namespace}/`, blobs }),
        trashCheckOf(registeredSessions),
      ),
    // The session's thread, every namespace. Its roots: the refs in every record under the prefix.
    deleteSession: async (saver, sessionId) => {
      await saver.deleteThread(sessionId);
    },
    // The thread's records (checkpoints, channel values, writes): what its trash entry counts.
    sessionPrefixes: (namespace, sessionId) => [`langgraph/${namespace}/${sessionId}/`],
  }),

  /** OpenAI Agents SDK sessions: the history of each session, by session id. */
  openaiAgentsSessions: defineStore({
    prefix: "openai-agents/",
    open: ({ deployment, namespace, registeredSessions }) =>
      hideTrashedAgentsSessions(
        bindAgentsSessions(deployment.shared, `openai-agents/${namespace}/`),
        trashCheckOf(registeredSessions),
      ),
    // Whether the session had a history. Its roots: refs in items (a tool output's, say).
    deleteSession: (sessions, sessionId, { signal }) =>
      sessions.deleteSession(sessionId, signal ? { signal } : {}),
    sessionPrefixes: (namespace, sessionId) => [`openai-agents/${namespace}/${sessionId}/`],
  }),

  /**
   * The Claude Agent SDK's `SessionStore` (pass it as the SDK's `sessionStore`): the principal's
   * transcripts, images and documents in its blobs; `delete` goes to the principal's trash (kind
   * `transcript`) for the deployment's trash days. A deployment session's transcripts are those
   * whose SDK session id is its id: hidden while it is in the trash, deleted with it.
   */
  agentSdkSessions: defineStore({
    prefix: AGENT_SDK_PREFIX,
    open: (context) => openAgentSdkSessions(context, trashCheckOf(context.registeredSessions)),
    trashBytes: (sessions, sessionId, { signal }) =>
      sessions.sessionBytes(sessionId, signal ? { signal } : {}),
    deleteSession: (sessions, sessionId, { signal }) =>
      sessions.purgeSession(sessionId, signal ? { signal } : {}),
    // Roots: the refs under the prefix, the trash's moved parts included (a restore reads them).
    sweep: (deployment, context) => sweepAgentSdkTrash(deployment.shared, deployment.trashDays, context),
  }),

  /** Agent session files and their artifacts, below this host's agent-sessions directory. */
  agentSessions: defineStore({
    open: ({ deployment, principal, registeredSessions }) =>
      hideTrashedSessionFiles(
        agentSessionsOf(deployment.agentSessionsDir, principal),
        trashCheckOf(registeredSessions),
      ),
    // Whether this host had the session file (and artifacts).
    deleteSession: (sessions, sessionId, { signal }) => sessions.delete(sessionId, signal ? { signal } : {}),
    // Session files, tool outputs (`<id>.<tool>.log`) and subagent outputs (`<id>.md`) of this host
    // and of the other hosts given.
    blobRefs: ({ deployment, otherAgentSessionsDirs }) =>
      scanFilesForBlobRefs([deployment.agentSessionsDir, ...otherAgentSessionsDirs]),
  }),
};

/** The default table's type. */
export type DefaultStores = typeof DEFAULT_STORES;
