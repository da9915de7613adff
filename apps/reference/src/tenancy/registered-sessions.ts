import { assertSessionId, type ObjectStore, type OperationOptions, StowageError } from "@stowage/core";
import type { Principal } from "@stowage/uploads";

/** Session ids registered in one tenant's namespace. */
export interface RegisteredSessions {
  /** Registers `sessionId`; true when it was new, false when it was registered already. */
  register(sessionId: string, options?: OperationOptions): Promise<boolean>;
  has(sessionId: string, options?: OperationOptions): Promise<boolean>;
  /** Every registered session id, in key order. */
  list(options?: OperationOptions): AsyncIterable<string>;
  /** Forgets `sessionId` (the last step of deleting a session); forgetting an unknown id is no error. */
  unregister(sessionId: string, options?: OperationOptions): Promise<void>;
}

/** The session ids registered for `principal` in `store`: `registered-sessions/<kind>/<id>/<sessionId>`. */
export function registeredSessionsOf(store: ObjectStore, principal: Principal): RegisteredSessions {
  const prefix = `registered-sessions/${principal.kind}/${principal.id}/`;
  // The one session-id rule (core's): an id registered here is one every package accepts.
  const keyOf = (sessionId: string) => {
    assertSessionId(sessionId);
    return `${prefix}${sessionId}`;
  };
  return {
    async register(sessionId, options = {}) {
      const record = new TextEncoder().encode(JSON.stringify({ sessionId, registeredAt: new Date() }));
      try {
        await store.put(keyOf(sessionId), record, { ...options, ifNoneMatch: "*" });
        return true;
      } catch (err) {
        if (StowageError.is(err, "ALREADY_EXISTS")) return false;
        throw err;
      }
    },
    async has(sessionId, options = {}) {
      return (await store.head(keyOf(sessionId), options)) !== null;
    },
    async *list(options = {}) {
      for await (const item of store.iterate({ ...options, prefix })) yield item.key.slice(prefix.length);
    },
    async unregister(sessionId, options = {}) {
      await store.delete(keyOf(sessionId), options);
    },
  };
}
