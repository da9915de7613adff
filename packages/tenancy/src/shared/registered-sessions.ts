import {
  assertSessionId,
  type ObjectStore,
  type OperationOptions,
  type Principal,
  StowageError,
} from "@stowage/core";

/**
 * Where a session id stands in its tenant's namespace: registered, in the trash (deleted, kept for
 * its grace period, restorable), being deleted (purged), or unknown (`null`).
 */
export type RegistrationState = "registered" | "trashed" | "deleting" | null;

/** A session's place in the trash, as its registration records it. */
export interface SessionTrashMark {
  /** This stay in the trash: a session trashed, restored and trashed again has another. */
  trashId: string;
  /** ISO 8601 time it went to the trash. */
  trashedAt: string;
  /** ISO 8601 time after which a sweep purges it. */
  purgeAfter: string;
  /** Who deleted it, as the deletion audit records it (`key:<id>`, `operator`). */
  by: string;
}

/** Session ids registered in one tenant's namespace. */
export interface RegisteredSessions {
  /**
   * Registers `sessionId`; true when it was new, false when it was registered already. CONFLICT
   * (reason `SESSION_DELETING`) while a deletion of the id is under way: send the DELETE again
   * to finish it, then register.
   */
  register(sessionId: string, options?: OperationOptions): Promise<boolean>;
  /** Whether `sessionId` is registered and not being deleted: what every route and grant needs. */
  has(sessionId: string, options?: OperationOptions): Promise<boolean>;
  state(sessionId: string, options?: OperationOptions): Promise<RegistrationState>;
  /**
   * When `sessionId` was registered, while it is registered and not being deleted; null otherwise.
   * A registration of the same id after a deletion has another time: what was bound to the old one
   * (an MCP session) is told apart by it.
   */
  registeredAt(sessionId: string, options?: OperationOptions): Promise<string | null>;
  /** Every registered session id, in key order (ids being deleted too). */
  list(options?: OperationOptions): AsyncIterable<string>;
  /**
   * Marks `sessionId` as being deleted (the first step of deleting a session): from now on `has`
   * is false, so nothing new is granted into it (an upload URL, a claim) while its stores are
   * emptied, and registering it is CONFLICT until `unregister`. No-op for an unknown id.
   */
  markDeleting(sessionId: string, options?: OperationOptions): Promise<void>;
  /** Takes a deletion's mark back: the deletion was refused before it changed anything. */
  unmarkDeleting(sessionId: string, options?: OperationOptions): Promise<void>;
  /** The session's trash mark while it is in the trash (or being purged from it); null otherwise. */
  trashMark(sessionId: string, options?: OperationOptions): Promise<SessionTrashMark | null>;
  /**
   * Moves a registered session to the trash: `has` is false from now on (every route answers 404),
   * registering the id again is CONFLICT (`SESSION_IN_TRASH`). No-op unless it is registered.
   */
  markTrashed(sessionId: string, mark: SessionTrashMark, options?: OperationOptions): Promise<void>;
  /** Takes the session out of the trash (its restore), when its mark is still `trashId`'s; true when it did. */
  unmarkTrashed(sessionId: string, trashId: string, options?: OperationOptions): Promise<boolean>;
  /** Forgets `sessionId` (the last step of deleting a session); forgetting an unknown id is no error. */
  unregister(sessionId: string, options?: OperationOptions): Promise<void>;
}

/** A registration as stored; `deletingSince` is set while its session is being deleted. */
interface RegistrationRecord {
  sessionId: string;
  registeredAt: string;
  deletingSince?: string;
  trash?: SessionTrashMark;
}

/** The mark as stored, or undefined when it is not one (a record written before the trash). */
function parsedMark(value: unknown): SessionTrashMark | undefined {
  const mark = value as Partial<SessionTrashMark> | null | undefined;
  if (
    typeof mark?.trashId !== "string" ||
    typeof mark.trashedAt !== "string" ||
    typeof mark.purgeAfter !== "string" ||
    typeof mark.by !== "string"
  ) {
    return undefined;
  }
  return { trashId: mark.trashId, trashedAt: mark.trashedAt, purgeAfter: mark.purgeAfter, by: mark.by };
}

const encode = (record: RegistrationRecord) => new TextEncoder().encode(JSON.stringify(record));

/** The record's fields; a record that does not parse counts as registered (only `register` writes it). */
function decode(bytes: Uint8Array, sessionId: string): RegistrationRecord {
  try {
    const value = JSON.parse(new TextDecoder().decode(bytes)) as Partial<RegistrationRecord>;
    const trash = parsedMark(value.trash);
    return {
      sessionId,
      registeredAt: typeof value.registeredAt === "string" ? value.registeredAt : new Date(0).toISOString(),
      ...(typeof value.deletingSince === "string" ? { deletingSince: value.deletingSince } : {}),
      ...(trash === undefined ? {} : { trash }),
    };
  } catch {
    return { sessionId, registeredAt: new Date(0).toISOString() };
  }
}

/** The session ids registered for `principal` in `store`: `<prefix><kind>/<id>/<sessionId>`. */
export function registeredSessionsOf(
  store: ObjectStore,
  registrationsPrefix: string,
  principal: Principal,
): RegisteredSessions {
  const prefix = `${registrationsPrefix}${principal.kind}/${principal.id}/`;
  // The one session-id rule (core's): an id registered here is one every package accepts.
  const keyOf = (sessionId: string) => {
    assertSessionId(sessionId);
    return `${prefix}${sessionId}`;
  };
  async function read(sessionId: string, options: OperationOptions): Promise<RegistrationRecord | null> {
    const bytes = await store.get(keyOf(sessionId), options);
    return bytes === null ? null : decode(bytes, sessionId);
  }
  async function state(sessionId: string, options: OperationOptions = {}): Promise<RegistrationState> {
    const record = await read(sessionId, options);
    if (record === null) return null;
    if (record.deletingSince !== undefined) return "deleting";
    return record.trash === undefined ? "registered" : "trashed";
  }
  return {
    async register(sessionId, options = {}) {
      const record = encode({ sessionId, registeredAt: new Date().toISOString() });
      try {
        await store.put(keyOf(sessionId), record, { ...options, ifNoneMatch: "*" });
        return true;
      } catch (err) {
        if (!StowageError.is(err, "ALREADY_EXISTS")) throw err;
      }
      const now = await state(sessionId, options);
      if (now === "deleting") {
        throw new StowageError(
          "CONFLICT",
          `session ${sessionId} is being deleted; send its DELETE again to finish, then register it`,
          { reason: "SESSION_DELETING" },
        );
      }
      if (now === "trashed") {
        throw new StowageError(
          "CONFLICT",
          `session ${sessionId} is in the trash; restore it, or purge it to register the id anew`,
          { reason: "SESSION_IN_TRASH" },
        );
      }
      return false;
    },
    async has(sessionId, options = {}) {
      return (await state(sessionId, options)) === "registered";
    },
    state,
    async registeredAt(sessionId, options = {}) {
      const record = await read(sessionId, options);
      const live = record !== null && record.deletingSince === undefined && record.trash === undefined;
      return live ? record.registeredAt : null;
    },
    async trashMark(sessionId, options = {}) {
      return (await read(sessionId, options))?.trash ?? null;
    },
    async markTrashed(sessionId, mark, options = {}) {
      const record = await read(sessionId, options);
      if (record === null || record.deletingSince !== undefined || record.trash !== undefined) return;
      await store.put(keyOf(sessionId), encode({ ...record, trash: mark }), options);
    },
    async unmarkTrashed(sessionId, trashId, options = {}) {
      const record = await read(sessionId, options);
      if (record?.trash?.trashId !== trashId || record.deletingSince !== undefined) return false;
      const { trash: _restored, ...registered } = record;
      await store.put(keyOf(sessionId), encode(registered), options);
      return true;
    },
    async *list(options = {}) {
      for await (const key of store.keys({ ...options, prefix })) yield key.slice(prefix.length);
    },
    async markDeleting(sessionId, options = {}) {
      const record = await read(sessionId, options);
      if (record === null || record.deletingSince !== undefined) return;
      const marked = { ...record, deletingSince: new Date().toISOString() };
      await store.put(keyOf(sessionId), encode(marked), options);
    },
    async unmarkDeleting(sessionId, options = {}) {
      const record = await read(sessionId, options);
      if (record?.deletingSince === undefined) return;
      const { deletingSince: _taken, ...registered } = record;
      await store.put(keyOf(sessionId), encode(registered), options);
    },
    async unregister(sessionId, options = {}) {
      await store.delete(keyOf(sessionId), options);
    },
  };
}
