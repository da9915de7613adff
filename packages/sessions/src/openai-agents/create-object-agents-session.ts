import type { AgentInputItem, Session } from "@openai/agents-core";
import {
  assertKeyDirectoryPrefix,
  assertSessionId,
  describeValue,
  type ObjectStore,
  StowageError,
} from "@stowage/core";
import type { SessionItem } from "./session-log.js";
import {
  contended,
  deleteBefore,
  MAX_ATTEMPTS,
  readSession,
  type SessionRecordsContext,
  writeRecord,
} from "./session-records.js";

/** Where sessions go when no prefix is given. */
const DEFAULT_PREFIX = "openai-agents/";
/** Most items one `addItems` takes. */
const MAX_BATCH_ITEMS = 10_000;

export interface ObjectAgentsSessionOptions {
  /** Any ObjectStore: memory, the file system, S3, PostgreSQL. */
  store: ObjectStore;
  /** The session: a Stowage session id, so that deleting the session deletes its history. */
  sessionId: string;
  /** Key prefix of every session: `""` or ending in `/`. Default `openai-agents/`. */
  prefix?: string;
}

const clone = (item: SessionItem) => structuredClone(item) as unknown as AgentInputItem;
const idOf = (item: SessionItem) => (typeof item.id === "string" && item.id.length > 0 ? item.id : undefined);

function checkItems(items: unknown): SessionItem[] {
  if (!Array.isArray(items))
    throw new StowageError("INVALID_INPUT", `addItems: items must be an array, got ${describeValue(items)}`);
  if (items.length > MAX_BATCH_ITEMS) {
    throw new StowageError(
      "TOO_LARGE",
      `addItems takes at most ${MAX_BATCH_ITEMS} items, got ${items.length}`,
      {
        details: { limit: MAX_BATCH_ITEMS },
      },
    );
  }
  for (const item of items) {
    if (typeof item !== "object" || item === null || Array.isArray(item))
      throw new StowageError(
        "INVALID_INPUT",
        `addItems: an item must be an object, got ${describeValue(item)}`,
      );
  }
  // Stored as JSON: what JSON cannot hold is refused now, not lost later.
  return JSON.parse(JSON.stringify(items)) as SessionItem[];
}

async function addItems(context: SessionRecordsContext, input: unknown): Promise<void> {
  const items = checkItems(input);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const { live, next } = await readSession(context);
    // An item whose id is stored (or repeated in the batch) is a retry: it is not stored twice.
    const ids = new Set(live.map(({ item }) => idOf(item)).filter((id) => id !== undefined));
    const fresh = items.filter((item) => {
      const id = idOf(item);
      if (id === undefined) return true;
      if (ids.has(id)) return false;
      ids.add(id);
      return true;
    });
    if (fresh.length === 0) return;
    if (await writeRecord(context, next, { op: "add", items: fresh })) return;
  }
  throw contended(context.sessionId);
}

async function popItem(context: SessionRecordsContext): Promise<AgentInputItem | undefined> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const { live, next } = await readSession(context);
    const last = live.at(-1);
    if (!last) return undefined;
    // Written at the next number only if no add came in between: an item added meanwhile is never
    // the one removed unseen, and never removed without being returned.
    if (await writeRecord(context, next, { op: "pop", target: [last.seq, last.index] }))
      return clone(last.item);
  }
  throw contended(context.sessionId);
}

async function clearSession(context: SessionRecordsContext): Promise<void> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const { next } = await readSession(context);
    if (await writeRecord(context, next, { op: "clear" })) {
      await deleteBefore(context, next);
      return;
    }
  }
  throw contended(context.sessionId);
}

async function getItems(
  context: SessionRecordsContext,
  limit: number | undefined,
): Promise<AgentInputItem[]> {
  if (limit !== undefined && (typeof limit !== "number" || !Number.isInteger(limit)))
    throw new StowageError(
      "INVALID_INPUT",
      `getItems: limit must be an integer, got ${describeValue(limit)}`,
    );
  if (limit !== undefined && limit <= 0) return [];
  const { live } = await readSession(context);
  const start = limit === undefined ? 0 : Math.max(live.length - limit, 0);
  return live.slice(start).map(({ item }) => clone(item));
}

/** The options checked, and the session's records in the store. */
export function sessionRecordsContext(
  options: ObjectAgentsSessionOptions,
  caller: string,
): SessionRecordsContext {
  if (typeof options !== "object" || options === null || typeof options.store?.put !== "function") {
    throw new StowageError(
      "INVALID_INPUT",
      `${caller}: store must be an ObjectStore, got ${describeValue(options?.store)}`,
    );
  }
  assertSessionId(options.sessionId, "sessionId");
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  assertKeyDirectoryPrefix(prefix);
  return {
    store: options.store,
    sessionId: options.sessionId,
    directory: `${prefix}${options.sessionId}/`,
    read: new Map(),
  };
}

/**
 * An OpenAI Agents SDK `Session` (`@openai/agents-core`) over any ObjectStore: pass it as a run's
 * `session`. Each change is one object written create-only at the session's next sequence number
 * (`<prefix><sessionId>/<12-digit seq>`), so writers in several processes never overwrite each
 * other: `addItems` drops items whose `id` is stored (a retried batch is not stored twice);
 * `popItem` removes the newest item only if nothing was added since it read it; `clearSession`
 * writes a clear and then deletes the records before it.
 */
export function createObjectAgentsSession(options: ObjectAgentsSessionOptions): Session {
  const context = sessionRecordsContext(options, "createObjectAgentsSession");
  return {
    getSessionId: async () => context.sessionId,
    getItems: (limit) => getItems(context, limit),
    addItems: (items) => addItems(context, items),
    popItem: () => popItem(context),
    clearSession: () => clearSession(context),
  };
}
