import type { SessionDeletion } from "@stowage/uploads";
import { Hono } from "hono";
import type { ServerTenant } from "../../tenancy/tenants.js";
import type { AppEnv } from "../context.js";

/** What `DELETE /agents/sessions/:sessionId` removed. */
export interface AgentSessionDeletion {
  sessionId: string;
  /** Its uploads (and everything else under its storage prefix); the quota follows. */
  uploads: SessionDeletion;
  /** Threads of the job whose id is the session's (how the app keys a session's threads). */
  threads: number;
  /**
   * Its stored sessions (session blobs): every record of its id, one per request it was stored
   * for, expired ones too. Other sessions stored for the same requests stay.
   */
  sessionBlobs: number;
  /** Whether this host had its session file (and artifacts). */
  sessionFile: boolean;
}

/**
 * Everything of one session of the tenant, each store in turn, and its registration last: a
 * deletion cut short leaves the session registered, and sending the DELETE again finishes it
 * (every step is idempotent). Hot state and prompt metrics are deleted whatever they hold.
 */
async function deleteAgentSession(
  tenant: ServerTenant,
  sessionId: string,
  signal: AbortSignal,
): Promise<AgentSessionDeletion> {
  const options = { signal };
  // Checks the registration in the tenant's namespace (NOT_FOUND, SESSION_NOT_FOUND, otherwise).
  const uploads = await tenant.uploads.deleteSession(sessionId, options);
  const threads = await tenant.threads.deleteJob(sessionId, options);
  await tenant.hotState.deleteSession(sessionId, options);
  await tenant.promptMetrics.deleteSession(sessionId, options);
  const sessionBlobs = await tenant.sessionBlobs.deleteForSession(sessionId, options);
  const sessionFile = await tenant.agentSessions.delete(sessionId, options);
  await tenant.registeredSessions.unregister(sessionId, options);
  return { sessionId, uploads, threads, sessionBlobs, sessionFile };
}

/**
 * `DELETE /agents/sessions/:sessionId`: deletes a session of the caller and everything of it
 * (the design document's "deleting a session removes all its uploaded artifacts", and the rest
 * the app keeps per session). Another principal's session, or none, is 404.
 */
export function agentSessionDeletionRoutes() {
  const app = new Hono<AppEnv>();
  app.delete("/agents/sessions/:sessionId", async (c) =>
    c.json(await deleteAgentSession(c.get("tenant"), c.req.param("sessionId"), c.req.raw.signal)),
  );
  return app;
}
