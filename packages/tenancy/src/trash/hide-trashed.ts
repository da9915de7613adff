import type { SessionFiles } from "@stowage/artifacts";
import { isSessionId, mapConcurrent, type OperationOptions, StowageError } from "@stowage/core";
import type { HotStateStore, HotStateStoreDispatcher } from "@stowage/hot-state";
import type { ThreadFeeds, ThreadRef } from "@stowage/thread-items";
import type { RegisteredSessions } from "../shared/registered-sessions.js";
import type { SessionActivityLog } from "../shared/session-activity.js";

/**
 * A session in the trash keeps its data where it was (so a restore is exact), and every store of
 * the tenant that is read by session id — or by something naming one (a job's threads, a
 * request's records) — hides it here, in the tenant, not in a route: a route added later reads
 * through these and cannot forget the check. Uploads are reached only for sessions that `has`
 * (the upload service's `sessionExists`), which a trashed one fails.
 */
export type TrashCheck = (sessionId: string, options?: OperationOptions) => Promise<boolean>;

/** Whether an id names a session of the tenant that is in the trash (an id that is no session id never does). */
export function trashCheckOf(registered: RegisteredSessions): TrashCheck {
  return async (sessionId, options = {}) =>
    isSessionId(sessionId) && (await registered.state(sessionId, options)) === "trashed";
}

/** Registrations read at once when a listing is filtered: one object read each (an S3 GET). */
const TRASH_CHECKS_AT_ONCE = 8;

/** The listed things whose session is not in the trash, in their order; the checks run side by side. */
export async function withoutTrashed<Thing>(
  listed: readonly Thing[],
  sessionIdOf: (thing: Thing) => string,
  inTrash: TrashCheck,
  options: OperationOptions,
): Promise<Thing[]> {
  const { signal } = options;
  const trashed = await mapConcurrent(
    listed,
    TRASH_CHECKS_AT_ONCE,
    (thing) => inTrash(sessionIdOf(thing), signal ? { signal } : {}),
    signal,
  );
  return listed.filter((_thing, index) => !trashed[index]);
}

/** What reaching a trashed session by a call that cannot answer "none" throws. */
export const notFound = (sessionId: string) =>
  new StowageError("NOT_FOUND", `no session ${sessionId}`, { reason: "SESSION_NOT_FOUND" });

/** Session files: a trashed session's are not found and not listed. */
export function hideTrashedSessionFiles(files: SessionFiles, inTrash: TrashCheck): SessionFiles {
  return {
    dir: files.dir,
    async list(options = {}) {
      return withoutTrashed(await files.list(options), (session) => session.sessionId, inTrash, options);
    },
    create: (sessionId, startedAt) => files.create(sessionId, startedAt),
    async get(sessionId, options = {}) {
      if (await inTrash(sessionId, options)) throw notFound(sessionId);
      return files.get(sessionId, options);
    },
    delete: (sessionId, options) => files.delete(sessionId, options),
  };
}

/**
 * Threads: a job whose id is a trashed session's (a session's threads are its job's) is not read,
 * listed, subscribed to nor posted to (NOT_FOUND); other jobs are as before.
 */
export function hideTrashedThreads(feeds: ThreadFeeds, inTrash: TrashCheck): ThreadFeeds {
  const guard = async (thread: ThreadRef, options?: OperationOptions) => {
    if (typeof thread?.jobId === "string" && (await inTrash(thread.jobId, options)))
      throw notFound(thread.jobId);
  };
  // Every read or write of one thread: the job checked first, then the call as it was.
  const guarded =
    <Rest extends unknown[], Result>(call: (thread: ThreadRef, ...rest: Rest) => Promise<Result>) =>
    async (thread: ThreadRef, ...rest: Rest): Promise<Result> => {
      const last = rest.at(-1) as { signal?: AbortSignal } | undefined;
      await guard(thread, last?.signal ? { signal: last.signal } : {});
      return call(thread, ...rest);
    };
  return {
    post: guarded(feeds.post.bind(feeds)),
    items: guarded(feeds.items.bind(feeds)),
    fullItem: guarded(feeds.fullItem.bind(feeds)),
    streamFullItem: guarded(feeds.streamFullItem.bind(feeds)),
    thread: guarded(feeds.thread.bind(feeds)),
    subscribe: guarded(feeds.subscribe.bind(feeds)),
    async threads(options = {}) {
      const page = await feeds.threads(options);
      return { ...page, threads: await withoutTrashed(page.threads, (info) => info.jobId, inTrash, options) };
    },
    deleteJob: (jobId, options) => feeds.deleteJob(jobId, options),
    close: () => feeds.close(),
    [Symbol.asyncDispose]: () => feeds[Symbol.asyncDispose](),
  };
}

/** Capture/restore activity: a record naming a trashed session reads as absent. */
export function hideTrashedActivity(log: SessionActivityLog, inTrash: TrashCheck): SessionActivityLog {
  return {
    ...log,
    async read(requestId, options = {}) {
      const activity = await log.read(requestId, options);
      const shown = async (entry: typeof activity.lastCapture) =>
        entry === null || (await inTrash(entry.sessionId, options)) ? null : entry;
      return {
        lastCapture: await shown(activity.lastCapture),
        lastRestore: await shown(activity.lastRestore),
      };
    },
  };
}

/**
 * Hot state: a trashed session's versions read as none, and it is neither claimed nor written
 * (NOT_FOUND), also through a dispatcher handle taken before it went to the trash. Claim status,
 * release and deletion go through: the trash and its purge use them.
 */
export function hideTrashedHotState(hotState: HotStateStore, inTrash: TrashCheck): HotStateStore {
  const guard = async (sessionId: string, options?: OperationOptions) => {
    if (await inTrash(sessionId, options?.signal ? { signal: options.signal } : {}))
      throw notFound(sessionId);
  };
  return {
    ...hotState,
    dispatcherFor(sessionId, options) {
      const dispatcher = hotState.dispatcherFor(sessionId, options);
      const guarded: HotStateStoreDispatcher = {
        role: dispatcher.role,
        sessionId: dispatcher.sessionId,
        current: () => dispatcher.current(),
        async load(operation) {
          await guard(sessionId, operation);
          return dispatcher.load(operation);
        },
        async write(input, operation) {
          await guard(sessionId, operation);
          return dispatcher.write(input, operation);
        },
        async update(change, operation) {
          await guard(sessionId, operation);
          return dispatcher.update(change, operation);
        },
      };
      return guarded;
    },
    async claimDispatcher(sessionId, options) {
      await guard(sessionId, options);
      return hotState.claimDispatcher(sessionId, options);
    },
    reader: {
      latest: async (sessionId, options) =>
        (await inTrash(sessionId, options)) ? null : hotState.reader.latest(sessionId, options),
      get: async (sessionId, version, options) =>
        (await inTrash(sessionId, options)) ? null : hotState.reader.get(sessionId, version, options),
    },
  };
}
