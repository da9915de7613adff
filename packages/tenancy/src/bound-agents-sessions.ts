import type { ObjectStore, OperationOptions } from "@stowage/core";
import { createObjectAgentsSession, deleteObjectAgentsSession } from "@stowage/sessions/openai-agents";

/** One principal's OpenAI Agents SDK sessions, each the history of one Stowage session. */
export interface TenantAgentsSessions {
  /**
   * The SDK `Session` of one of the principal's sessions: pass it as a run's `session`
   * (`run(agent, input, { session })`). Another principal's session of the same id is another.
   */
  session(sessionId: string): ReturnType<typeof createObjectAgentsSession>;
  /** Deletes every record of the session's history: whether it had any. */
  deleteSession(sessionId: string, options?: OperationOptions): Promise<boolean>;
}

/** The sessions below `prefix` (the principal's namespace) of the shared store. */
export function bindAgentsSessions(store: ObjectStore, prefix: string): TenantAgentsSessions {
  return {
    session: (sessionId) => createObjectAgentsSession({ store, sessionId, prefix }),
    deleteSession: (sessionId, options = {}) =>
      deleteObjectAgentsSession({ store, sessionId, prefix }, options),
  };
}
