import { StowageError } from "@stowage/core";
import type { SessionDeletion } from "@stowage/uploads";
import { Hono } from "hono";
import type { ServerTenant } from "../../tenancy/tenants.js";
import type { AppEnv } from "../context.js";
import { DISPATCHER_TOKEN_HEADER, dispatcherTokenOf } from "./dispatcher-token.js";

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
 * deletion cut short leaves the session marked as being deleted, and sending the DELETE again
 * finishes it (every step is idempotent). The mark comes first, so that nothing new is granted
 * into the session while it is emptied (an upload URL, a dispatcher claim); the uploads are
 * revoked with it, so a URL handed out before cannot write into it, or into the id registered
 * again. A session whose dispatcher is claimed is deleted only with the dispatcher's token
 * (FORBIDDEN `NOT_DISPATCHER` otherwise, before anything changes): the agents that hold the same
 * API key cannot end the claim by deleting the session and registering it again.
 */
async function deleteAgentSession(
  tenant: ServerTenant,
  sessionId: string,
  token: string | undefined,
  signal: AbortSignal,
): Promise<AgentSessionDeletion> {
  const options = { signal };
  const withToken = { ...options, ...(token === undefined ? {} : { token }) };
  const registration = await tenant.registeredSessions.state(sessionId, options);
  if (registration === null) {
    throw new StowageError("NOT_FOUND", `no session ${sessionId}`, { reason: "SESSION_NOT_FOUND" });
  }
  if ((await tenant.hotState.claimStatus(sessionId, withToken)) === "other") {
    throw new StowageError("FORBIDDEN", `only the dispatcher of session ${sessionId} deletes it`, {
      reason: "NOT_DISPATCHER",
      details: { sessionId },
    });
  }
  await tenant.registeredSessions.markDeleting(sessionId, options);
  try {
    // Refused only when a claim was made since the check above; its holder deletes the session.
    await tenant.hotState.deleteSession(sessionId, withToken);
  } catch (err) {
    if (registration === "registered" && StowageError.is(err, "FORBIDDEN")) {
      await tenant.registeredSessions.unmarkDeleting(sessionId, options);
    }
    throw err;
  }
  const uploads = await tenant.uploads.deleteSession(sessionId, options);
  const threads = await tenant.threads.deleteJob(sessionId, options);
  await tenant.promptMetrics.deleteSession(sessionId, options);
  const sessionBlobs = await tenant.sessionBlobs.deleteForSession(sessionId, options);
  const sessionFile = await tenant.agentSessions.delete(sessionId, options);
  await tenant.registeredSessions.unregister(sessionId, options);
  return { sessionId, uploads, threads, sessionBlobs, sessionFile };
}

/**
 * `DELETE /agents/sessions/:sessionId`: deletes a session of the caller and everything of it
 * (the design document's "deleting a session removes all its uploaded artifacts", and the rest
 * the app keeps per session). Another principal's session, or none, is 404. A claimed session
 * needs its dispatcher's token in {@link DISPATCHER_TOKEN_HEADER}.
 */
export function agentSessionDeletionRoutes() {
  const app = new Hono<AppEnv>();
  app.delete("/agents/sessions/:sessionId", async (c) =>
    c.json(
      await deleteAgentSession(
        c.get("tenant"),
        c.req.param("sessionId"),
        dispatcherTokenOf(c),
        c.req.raw.signal,
      ),
    ),
  );
  return app;
}
