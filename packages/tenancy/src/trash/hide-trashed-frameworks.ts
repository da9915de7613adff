import type { OperationOptions } from "@stowage/core";
import type { StowageCheckpointSaver } from "@stowage/sessions/langgraph";
import type { TenantAgentsSessions } from "../bound-agents-sessions.js";
import { notFound, type TrashCheck } from "./hide-trashed.js";

type CheckpointConfig = Parameters<StowageCheckpointSaver["getTuple"]>[0];

/** The thread a LangGraph config names, when it names one; the saver checks what it is. */
const threadOf = (config: CheckpointConfig | undefined): unknown => config?.configurable?.thread_id;

/** Whether `threadId` is a trashed session's (anything that is no session id is left to the saver). */
const inTrashThread = (inTrash: TrashCheck, threadId: unknown): Promise<boolean> =>
  typeof threadId === "string" ? inTrash(threadId) : Promise.resolve(false);

/**
 * The saver's members a trashed thread changes. Reads answer as for a thread that has no
 * checkpoint (a graph invoked on it starts afresh), writes are NOT_FOUND (a restore must find the
 * thread as it was), and LangGraph's walk of the parent chain is NOT_FOUND too (it runs only
 * inside a run, which then writes). `deleteThread`, `getNextVersion`, `serde` and `toJSON` go
 * through: the trash's purge deletes the thread.
 */
const GUARDED = ["get", "getTuple", "list", "put", "putWrites", "getDeltaChannelHistory"] as const;

/**
 * A LangGraph checkpoint saver that does not reach a trashed session's thread. A Proxy rather
 * than an object of the saver's methods: callers hold the saver's class (its private state
 * included), and every member not guarded here is the saver's own, bound to it.
 */
export function hideTrashedCheckpointSaver(
  saver: StowageCheckpointSaver,
  inTrash: TrashCheck,
): StowageCheckpointSaver {
  const refuseTrashed = async (config: CheckpointConfig | undefined) => {
    const threadId = threadOf(config);
    if (await inTrashThread(inTrash, threadId)) throw notFound(threadId as string);
  };
  const guarded: Pick<StowageCheckpointSaver, (typeof GUARDED)[number]> = {
    async get(config) {
      return (await inTrashThread(inTrash, threadOf(config))) ? undefined : saver.get(config);
    },
    async getTuple(config) {
      return (await inTrashThread(inTrash, threadOf(config))) ? undefined : saver.getTuple(config);
    },
    // Without a thread id, a listing of every thread: the trashed ones' checkpoints are left out.
    async *list(config, options) {
      const trashed = new Map<unknown, Promise<boolean>>();
      const isTrashed = (threadId: unknown) => {
        if (!trashed.has(threadId)) trashed.set(threadId, inTrashThread(inTrash, threadId));
        return trashed.get(threadId)!;
      };
      if (await isTrashed(threadOf(config))) return;
      for await (const tuple of saver.list(config, options)) {
        if (!(await isTrashed(threadOf(tuple.config)))) yield tuple;
      }
    },
    async put(config, checkpoint, metadata, newVersions) {
      await refuseTrashed(config);
      return saver.put(config, checkpoint, metadata, newVersions);
    },
    async putWrites(config, writes, taskId, taskPath) {
      await refuseTrashed(config);
      return saver.putWrites(config, writes, taskId, taskPath);
    },
    async getDeltaChannelHistory(options) {
      await refuseTrashed(options?.config);
      return saver.getDeltaChannelHistory(options);
    },
  };
  return new Proxy(saver, {
    get(target, property) {
      if ((GUARDED as readonly PropertyKey[]).includes(property))
        return guarded[property as keyof typeof guarded];
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * OpenAI Agents sessions: a trashed session's history reads as empty, and is neither added to,
 * popped nor cleared (NOT_FOUND), also through a `Session` taken before it went to the trash.
 * `deleteSession` goes through: the trash's purge uses it.
 */
export function hideTrashedAgentsSessions(
  sessions: TenantAgentsSessions,
  inTrash: TrashCheck,
): TenantAgentsSessions {
  return {
    session(sessionId) {
      const session = sessions.session(sessionId);
      const refuseTrashed = async () => {
        if (await inTrash(sessionId)) throw notFound(sessionId);
      };
      return {
        getSessionId: () => session.getSessionId(),
        getItems: async (limit) => ((await inTrash(sessionId)) ? [] : session.getItems(limit)),
        async addItems(items) {
          await refuseTrashed();
          return session.addItems(items);
        },
        async popItem() {
          await refuseTrashed();
          return session.popItem();
        },
        async clearSession() {
          await refuseTrashed();
          return session.clearSession();
        },
      };
    },
    deleteSession: (sessionId: string, options?: OperationOptions) =>
      sessions.deleteSession(sessionId, options),
  };
}
