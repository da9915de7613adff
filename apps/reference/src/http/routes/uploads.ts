import { registerAgentSession } from "@stowage/tenancy/shared";
import { Hono } from "hono";
import type { Services } from "../../services.js";
import { type AppEnv, jsonBody } from "../context.js";
import { withoutDataDir } from "../errors.js";

/** How a caller registers a session for uploads, for the refusal of an unregistered one. */
const REGISTER_HINT =
  'register it first: POST /agents/sessions with {"sessionId": "<id>"} and this key ' +
  "(or `stowage session register <id> --user <id> | --org <id>` on the server's host)";

/**
 * The upload API's refusal of a session the caller has not registered (404 `SESSION_NOT_FOUND`)
 * with how to register it, as the CLI's `upload` says; any other response passes untouched. The
 * package cannot say it: registration is this app's route.
 */
async function withRegistrationHint(response: Response): Promise<Response> {
  if (response.status !== 404 || !response.headers.get("content-type")?.startsWith("application/json")) {
    return response;
  }
  const body = (await response.clone().json()) as { error?: unknown; reason?: unknown; details?: object };
  if (body.reason !== "SESSION_NOT_FOUND") return response;
  const hinted = {
    ...body,
    error: `${String(body.error)}; ${REGISTER_HINT}`,
    details: { ...body.details, register: "POST /agents/sessions" },
  };
  const headers = new Headers(response.headers);
  headers.delete("content-length");
  return new Response(JSON.stringify(hinted), { status: 404, headers });
}

/**
 * Uploads: the session registration they need (a session in the caller's own namespace), the
 * upload API of `@stowage/uploads` mounted as it is (on behalf of the caller's tenant), and the
 * file-system backend's signed URLs. Both mounted handlers answer their own errors; those go out
 * without the data directory's path, like every other error of the app.
 */
export function uploadRoutes(services: Pick<Services, "handleDirectRequest" | "config">) {
  const app = new Hono<AppEnv>();
  const { dataDir } = services.config;

  // Registers an agent session in the caller's namespace; registering it again is a no-op, and
  // registering it while its deletion is under way is CONFLICT (`SESSION_DELETING`). The same id
  // of another principal is another session: ids cannot be squatted. An invalid id is refused
  // before anything is written (the registry checks it with the one session-id rule).
  app.post("/agents/sessions", async (c) => {
    const body = (await jsonBody(c)) as Record<string, unknown> | null;
    const sessionId = body?.sessionId as string;
    const { agentSessions, registeredSessions, principal } = c.get("tenant");
    const signal = c.req.raw.signal;
    // Its session file (where its artifacts go) is made on this host with it. The file is in the
    // tenant's own directory, so it never tells of another principal's session.
    const created = await registerAgentSession(registeredSessions, agentSessions, sessionId, { signal });
    return c.json({ sessionId, owner: principal }, created ? 201 : 200);
  });

  // Deleting a session's uploads (the layout exists for "simple recursive deletion"); another
  // principal's session is NOT_FOUND. What went is recorded in the caller's deletion audit.
  app.delete("/agents/sessions/:sessionId/uploads", async (c) => {
    const sessionId = c.req.param("sessionId");
    const tenant = c.get("tenant");
    const signal = c.req.raw.signal;
    const deleted = await tenant.uploads.deleteSession(sessionId, { signal });
    if (deleted.deletedObjects > 0) {
      await tenant.deletionAudit.append(
        [
          {
            kind: "uploads",
            id: sessionId,
            bytes: deleted.deletedBytes,
            by: `key:${c.get("keyId")}`,
            reason: "the session's uploads deleted",
            report: { deletedObjects: deleted.deletedObjects, deletedBytes: deleted.deletedBytes },
          },
        ],
        { signal },
      );
    }
    return c.json(deleted);
  });

  // The documented upload API: one handler, the same one the package's tests mount.
  app.all("/agents/*", async (c) =>
    withoutDataDir(await withRegistrationHint(await c.get("tenant").uploads.handle(c.req.raw)), dataDir),
  );

  // Signed URLs served by this app (the file-system backend's, or every backend's when uploads are
  // sealed): the signature is the authorization.
  app.all("/direct/*", async (c) => withoutDataDir(await services.handleDirectRequest(c.req.raw), dataDir));
  return app;
}
