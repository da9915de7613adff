import { Hono } from "hono";
import type { Services } from "../../services.js";
import type { AppEnv } from "../context.js";
import { DISPATCHER_TOKEN_HEADER, dispatcherTokenOf } from "./dispatcher-token.js";
import { trashDaysQuery } from "./trash-days-query.js";

/**
 * `DELETE /agents/sessions/:sessionId[?trashDays=]`: deletes a session of the caller
 * (`stowage.deleteSession`): by default it goes to the caller's trash for the deployment's
 * `STOWAGE_TRASH_DAYS` (7), every store of it unreachable until restored (`POST
 * /trash/session/:id/restore`) or purged, answering `{ sessionId, trash: { purgeAfter, bytes… } }`;
 * with `trashDays=0` (or the deployment's 0) it is deleted at once from every store of the
 * deployment's table (the design document's "deleting a session removes all its uploaded
 * artifacts", and the rest the app keeps per session), its registration last, answering
 * `{ sessionId, <store>: what it removed… }`. Another principal's session, or none, is 404.
 * A claimed session needs its dispatcher's token in {@link DISPATCHER_TOKEN_HEADER}. The caller's
 * deletion audit (`GET /audit`) gets its rows, by `key:<keyId>`.
 */
export function agentSessionDeletionRoutes(services: Pick<Services, "stowage">) {
  const app = new Hono<AppEnv>();
  app.delete("/agents/sessions/:sessionId", async (c) => {
    const token = dispatcherTokenOf(c);
    const trashDays = trashDaysQuery(c.req.query("trashDays"));
    const { sessionId, deleted, trash } = await services.stowage.deleteSession(
      c.get("principal"),
      c.req.param("sessionId"),
      {
        signal: c.req.raw.signal,
        // The deletion audit's "who": the key the request came with.
        by: `key:${c.get("keyId")}`,
        ...(token === undefined ? {} : { dispatcherToken: token }),
        ...(trashDays === undefined ? {} : { trashDays }),
      },
    );
    return c.json(trash ? { sessionId, trash } : { sessionId, ...deleted });
  });
  return app;
}
