import { registerAgentSession } from "@stowage/tenancy/shared";
import { Hono } from "hono";
import type { Services } from "../../services.js";
import { type AppEnv, jsonBody } from "../context.js";
import { withoutDataDir } from "../errors.js";
import { trashDaysQuery } from "./trash-days-query.js";

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
export function uploadRoutes(services: Pick<Services, "handleDirectRequest" | "config" | "stowage">) {
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

  // `DELETE /agents/sessions/:sessionId/uploads[?trashDays=]` (`stowage.deleteSessionUploads`): by
  // default into the caller's trash, each upload an `upload` there (`by` the caller's key) until
  // the sweep purges it the deployment's `STOWAGE_TRASH_DAYS` later: `{ sessionId, trash: { uploads,
  // bytes, purgeAfter } }`; with `trashDays=0` (or the deployment's 0) deleted now, its URLs
  // revoked: `{ sessionId, deletedObjects, deletedBytes }`. Another trash time is 400
  // (`TRASH_DAYS_FIXED`); another principal's session is 404. One deletion-audit row either way.
  app.delete("/agents/sessions/:sessionId/uploads", async (c) => {
    const trashDays = trashDaysQuery(c.req.query("trashDays"));
    const { sessionId, deleted, trash } = await services.stowage.deleteSessionUploads(
      c.get("principal"),
      c.req.param("sessionId"),
      {
        signal: c.req.raw.signal,
        by: `key:${c.get("keyId")}`,
        ...(trashDays === undefined ? {} : { trashDays }),
      },
    );
    return c.json(deleted ? { sessionId, ...deleted } : { sessionId, trash });
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
