import {
  assertSessionId,
  type ObjectStore,
  type OperationOptions,
  type Principal,
  StowageError,
} from "@stowage/core";

/** Where a session id stands in its tenant's namespace: registered, being deleted, or unknown (`null`). */
export type RegistrationState = "registered" | "deleting" | null;

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
  /** Forgets `sessionId` (the last step of deleting a session); forgetting an unknown id is no error. */
  unregister(sessionId: string, options?: OperationOptions): Promise<void>;
}

/** A registration as stored; `deletingSince` is set while its session is being deleted. */
interface RegistrationRecord {
  sessionId: string;
  registeredAt: string;
  deletingSince?: string;
}

const encode = (record: RegistrationRecord) => new TextEncoder().encode(JSON.stringify(record));

/** The record's fields; a record that does not parse counts as registered (only `register` writes it). */
function decode(bytes: Uint8Array, sessionId: string): RegistrationRecord {
  try {
    const value = JSON.parse(new TextDecoder().decode(bytes)) as Partial<RegistrationRecord>;
    return {
      sessionId,
      registeredAt: typeof value.registeredAt === "string" ? value.registeredAt : new Date(0).toISOString(),
      ...(typeof value.deletingSince === "string" ? { deletingSince: value.deletingSince } : {}),
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
    return record.deletingSince === undefined ? "registered" : "deleting";
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
      if ((await state(sessionId, options)) === "deleting") {
        throw new StowageError(
          "CONFLICT",
          `session ${sessionId} is being deleted; send its DELETE again to finish, then register it`,
          { reason: "SESSION_DELETING" },
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
      return record === null || record.deletingSince !== undefined ? null : record.registeredAt;
    },
    async *list(options = {}) {
      for await (const item of store.iterate({ ...options, prefix })) yield item.key.slice(prefix.length);
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
