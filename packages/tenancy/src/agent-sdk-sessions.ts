import {
  describeValue,
  type ObjectStore,
  type OperationOptions,
  type Principal,
  StowageError,
  trashDaysOf,
} from "@stowage/core";
import {
  createObjectSessionStore,
  type ObjectSessionStore,
  type SessionKey,
  type SessionStoreDeleteOptions,
  type TrashedTranscript,
} from "@stowage/sessions";
import { assertDeletedBy, type DeletionAuditInput } from "./shared/deletion-audit-rows.js";
import { namespaceOf, ownerOf, principalOfOwner } from "./shared/owner.js";
import type { StoreContext } from "./store-definition.js";
import type { SweepContext } from "./sweep.js";
import { notFound, type TrashCheck, withoutTrashed } from "./trash/hide-trashed.js";

// Every principal's Agent SDK SessionStore (`createObjectSessionStore`) in the shared store, at
// `agent-sdk/<kind>/<id>/<projectKey>/<sessionId>/…`: sealed with the rest when the deployment
// is encrypted, its images in the principal's blobs, its `delete` into the store's trash
// (`agent-sdk/<kind>/<id>/~trash/`) for the deployment's trash days, listed in the principal's
// trash (kind `transcript`) and purged by the deployment's sweep, each step in the deletion audit.

/** The row's prefix in the shared store. */
export const AGENT_SDK_PREFIX = "agent-sdk/";

/**
 * One empty mark per principal that has sent a transcript to the trash (`<kind>/<id>`): what the
 * sweep walks, instead of every transcript of every principal. `~` begins no principal kind.
 */
const TRASHED_MARKS = `${AGENT_SDK_PREFIX}~trashed/`;

/** What the deletion audit calls the row's things. */
const AUDIT_KIND = "agentSdkSessions";

/** Who a `delete` through the SDK is by: the SDK passes no one. */
export const SDK_DELETED_BY = "agent-sdk";

/** Purges one sweep run does at most: a backlog is worked off over several runs. */
const PURGES_PER_SWEEP = 100;

/** Options of the tenant's `delete`: the store's, and who deleted it (the audit's `by`). */
export interface AgentSdkDeleteOptions extends SessionStoreDeleteOptions {
  /** Who deleted it, in the audit (`key:<id>`, `cli`…); default `agent-sdk`. */
  by?: string;
}

/** The principal's Agent SDK SessionStore, as its tenant opens it. */
export interface AgentSdkSessions extends ObjectSessionStore {
  delete(key: SessionKey, options?: AgentSdkDeleteOptions): Promise<void>;
  purgeFromTrash(
    projectKey: string,
    trashId: string,
    options?: OperationOptions & { by?: string },
  ): Promise<TrashedTranscript>;
  /** The principal's transcripts in the trash, of every project, oldest delete first. */
  listAllTrash(options?: OperationOptions): Promise<TrashedTranscript[]>;
  /** Bytes the transcripts of a deployment session hold (those whose SDK session id is its id). */
  sessionBytes(sessionId: string, options?: OperationOptions): Promise<number>;
  /**
   * Deletes the transcripts of a deployment session for good, in every project, its subagents'
   * with them, trashed or not (the session's own purge: it was in the principal's trash).
   */
  purgeSession(
    sessionId: string,
    options?: OperationOptions,
  ): Promise<{ transcripts: number; deletedBytes: number }>;
}

const transcriptId = (key: { projectKey: string; sessionId: string; subpath?: string }) =>
  `${key.projectKey}/${key.sessionId}${key.subpath ? `/${key.subpath}` : ""}`;

/** The principal's store below `agent-sdk/`, or the error that says why it has none. */
function principalStore(
  shared: ObjectStore,
  principal: Principal,
  trashDays: number | undefined,
  blobs?: StoreContext["blobs"],
): ObjectSessionStore | StowageError {
  try {
    return createObjectSessionStore({
      store: shared,
      prefix: `${AGENT_SDK_PREFIX}${namespaceOf(principal)}`,
      trashDays: trashDaysOf(undefined, trashDays),
      ...(blobs ? { blobs } : {}),
    });
  } catch (err) {
    // Only the prefix's length can fail here: the principal's id is a safe id already.
    return new StowageError(
      "INVALID_INPUT",
      `principal ${ownerOf(principal)} has no Agent SDK SessionStore: its id is too long for the store's key prefix (${StowageError.is(err) ? err.message : String(err)})`,
      { reason: "PRINCIPAL_ID_TOO_LONG", cause: err },
    );
  }
}

/** Every project key with a transcript in the trash of `store` (its `~trash/<projectKey>/` segment). */
async function trashedProjects(
  shared: ObjectStore,
  principal: Principal,
  options: OperationOptions,
): Promise<string[]> {
  const root = `${AGENT_SDK_PREFIX}${namespaceOf(principal)}/~trash/`;
  const projects = new Set<string>();
  for await (const item of shared.iterate({ ...options, prefix: root })) {
    const slash = item.key.indexOf("/", root.length);
    if (slash > root.length) projects.add(item.key.slice(root.length, slash));
  }
  return [...projects];
}

async function listAllTrash(
  shared: ObjectStore,
  principal: Principal,
  store: ObjectSessionStore,
  options: OperationOptions,
): Promise<TrashedTranscript[]> {
  const all: TrashedTranscript[] = [];
  for (const projectKey of await trashedProjects(shared, principal, options)) {
    all.push(...(await store.listTrash(projectKey, options)));
  }
  return all.sort((a, b) => a.trashedAt.localeCompare(b.trashedAt) || a.trashId.localeCompare(b.trashId));
}

const purgedRow = (trashed: TrashedTranscript, by: string, why: string): DeletionAuditInput => ({
  kind: AUDIT_KIND,
  id: transcriptId(trashed),
  bytes: trashed.bytes,
  by,
  reason: `purged from the trash: ${why}`,
});

/** A store whose every call fails with `why` (a principal the row cannot serve). */
function refusingStore(why: StowageError): AgentSdkSessions {
  const refuse = async () => {
    throw why;
  };
  return {
    append: refuse,
    load: refuse,
    listSessions: refuse,
    listSessionSummaries: refuse,
    delete: refuse,
    listSubkeys: refuse,
    compact: refuse,
    listTrash: refuse,
    restoreFromTrash: refuse,
    purgeFromTrash: refuse,
    purgeExpiredTrash: refuse,
    // Nothing of it can be in the trash, nor stored: listing or deleting the principal's is not refused.
    listAllTrash: async () => [],
    sessionBytes: async () => 0,
    purgeSession: async () => ({ transcripts: 0, deletedBytes: 0 }),
  };
}

/**
 * The tenant's Agent SDK SessionStore: a transcript whose session id is a session of the tenant
 * in the trash reads as none (`load` null, left out of listings) and is neither appended to,
 * compacted nor deleted (NOT_FOUND), as every store of a trashed session; `delete` marks the
 * principal for the sweep before it moves anything, and every delete and purge has its audit row.
 */
export function openAgentSdkSessions(context: StoreContext, inTrash: TrashCheck): AgentSdkSessions {
  const { deployment, principal, blobs, deletionAudit } = context;
  const made = principalStore(deployment.shared, principal, deployment.trashDays, blobs);
  if (made instanceof StowageError) return refusingStore(made);
  const store = made;
  const storeDays = trashDaysOf(undefined, deployment.trashDays);
  const refuseTrashed = async (key: { sessionId: string }, options: OperationOptions = {}) => {
    if (await inTrash(key.sessionId, options)) throw notFound(key.sessionId);
  };
  const audit = (rows: DeletionAuditInput[], options: OperationOptions) =>
    deletionAudit.append(rows, options);

  return {
    async append(key, entries, options = {}) {
      await refuseTrashed(key, options);
      return store.append(key, entries, options);
    },
    load: async (key, options = {}) =>
      (await inTrash(key.sessionId, options)) ? null : store.load(key, options),
    listSessions: async (projectKey, options = {}) =>
      withoutTrashed(await store.listSessions(projectKey, options), (s) => s.sessionId, inTrash, options),
    listSessionSummaries: async (projectKey, options = {}) =>
      withoutTrashed(
        await store.listSessionSummaries(projectKey, options),
        (s) => s.sessionId,
        inTrash,
        options,
      ),
    listSubkeys: async (key, options = {}) =>
      (await inTrash(key.sessionId, options)) ? [] : store.listSubkeys(key, options),
    async compact(key, options = {}) {
      await refuseTrashed(key, options);
      return store.compact(key, options);
    },

    async delete(key, options = {}) {
      const { by = SDK_DELETED_BY, ...deletion } = options;
      assertDeletedBy(by);
      const days = trashDaysOf(deletion.trashDays, storeDays);
      await refuseTrashed(key, deletion);
      // The mark first: a crash after the move leaves a transcript the sweep still finds.
      if (days > 0)
        await deployment.shared.put(`${TRASHED_MARKS}${namespaceOf(principal)}`, new Uint8Array(), deletion);
      await store.delete(key, { ...deletion, trashDays: days });
      await audit(
        [
          {
            kind: AUDIT_KIND,
            id: transcriptId(key),
            by,
            reason: days > 0 ? `moved to the trash for ${days} days` : "deleted at once (trashDays 0)",
          },
        ],
        deletion,
      );
    },

    listTrash: (projectKey, options) => store.listTrash(projectKey, options),
    listAllTrash: (options = {}) => listAllTrash(deployment.shared, principal, store, options),
    restoreFromTrash: (projectKey, trashId, options) => store.restoreFromTrash(projectKey, trashId, options),
    async purgeFromTrash(projectKey, trashId, options = {}) {
      const { by = SDK_DELETED_BY, ...operation } = options;
      assertDeletedBy(by);
      const purged = await store.purgeFromTrash(projectKey, trashId, operation);
      await audit([purgedRow(purged, by, `asked by ${by}`)], operation);
      return purged;
    },
    sessionBytes: async (sessionId, options = {}) =>
      (await transcriptsOfSession(deployment.shared, principal, sessionId, options)).bytes,
    async purgeSession(sessionId, options = {}) {
      const { projectKeys, bytes } = await transcriptsOfSession(
        deployment.shared,
        principal,
        sessionId,
        options,
      );
      // The store underneath: the wrapper refuses a session in the trash, which this one is.
      for (const projectKey of projectKeys)
        await store.delete({ projectKey, sessionId }, { ...options, trashDays: 0 });
      return { transcripts: projectKeys.length, deletedBytes: bytes };
    },
    async purgeExpiredTrash(options = {}) {
      const { limit = 1000, ...operation } = options;
      if (!Number.isSafeInteger(limit) || limit < 1) {
        throw new StowageError(
          "INVALID_INPUT",
          `limit must be a positive integer, got ${describeValue(limit)}`,
        );
      }
      return purgeExpired(deployment.shared, principal, store, limit, operation, (rows) =>
        audit(rows, operation),
      );
    },
  };
}

/** Purges the principal's transcripts whose stay is over, at most `limit`, each audited. */
async function purgeExpired(
  shared: ObjectStore,
  principal: Principal,
  store: ObjectSessionStore,
  limit: number,
  options: OperationOptions,
  audit: (rows: DeletionAuditInput[]) => Promise<void>,
): Promise<number> {
  const now = Date.now();
  let purged = 0;
  for (const trashed of await listAllTrash(shared, principal, store, options)) {
    if (purged >= limit) break;
    if (Date.parse(trashed.purgeAfter) > now) continue;
    try {
      const gone = await store.purgeFromTrash(trashed.projectKey, trashed.trashId, options);
      await audit([
        purgedRow(gone, SDK_DELETED_BY, `its ${trashDaysBetween(gone)} days in the trash were over`),
      ]);
      purged++;
    } catch (err) {
      // A restore cut short is finished, never purged: part of the transcript is live again.
      if (StowageError.is(err, "CONFLICT") && err.reason === "RESTORE_UNFINISHED") {
        await store.restoreFromTrash(trashed.projectKey, trashed.trashId, options);
        continue;
      }
      // Restored or purged by another process since the listing: theirs.
      if (!StowageError.is(err, "NOT_FOUND") && !StowageError.is(err, "CONFLICT")) throw err;
    }
  }
  return purged;
}

const trashDaysBetween = (trashed: TrashedTranscript) =>
  Math.round((Date.parse(trashed.purgeAfter) - Date.parse(trashed.trashedAt)) / (24 * 60 * 60 * 1000));

/**
 * The deployment's sweep of Agent SDK transcripts: every principal marked as having sent one to
 * the trash has those whose stay is over purged, audited to the principal; at most
 * {@link PURGES_PER_SWEEP} a run. A principal whose trash is empty keeps its mark (one empty
 * object): removing it could race a delete that just wrote it.
 */
export async function sweepAgentSdkTrash(
  shared: ObjectStore,
  trashDays: number | undefined,
  context: SweepContext,
): Promise<number> {
  const { audit, ...operation } = context;
  let purged = 0;
  for await (const mark of shared.iterate({ ...operation, prefix: TRASHED_MARKS })) {
    if (purged >= PURGES_PER_SWEEP) break;
    const owner = mark.key.slice(TRASHED_MARKS.length).replace("/", ":");
    const principal = principalOfOwner(owner);
    if (!principal) continue;
    const store = principalStore(shared, principal, trashDays);
    if (store instanceof StowageError) continue;
    purged += await purgeExpired(shared, principal, store, PURGES_PER_SWEEP - purged, operation, (rows) =>
      audit(owner, rows),
    );
  }
  return purged;
}

/**
 * The transcripts of one deployment session (those whose SDK session id is the session's id, in
 * every project of the principal): their project keys and the bytes they hold. Reads every key of
 * the principal's store: a session's deletion is rare, and the store keeps no index by session.
 */
async function transcriptsOfSession(
  shared: ObjectStore,
  principal: Principal,
  sessionId: string,
  options: OperationOptions,
): Promise<{ projectKeys: string[]; bytes: number }> {
  const root = `${AGENT_SDK_PREFIX}${namespaceOf(principal)}/`;
  const projectKeys = new Set<string>();
  let bytes = 0;
  for await (const item of shared.iterate({ ...options, prefix: root })) {
    const [projectKey, id] = item.key.slice(root.length).split("/", 2);
    if (id !== sessionId || projectKey === "~trash" || projectKey === undefined) continue;
    projectKeys.add(projectKey);
    bytes += item.size;
  }
  return { projectKeys: [...projectKeys], bytes };
}
