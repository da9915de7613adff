import { Hono } from "hono";
import type { Services } from "../../services.js";
import type { AppEnv } from "../context.js";
import { trashDaysQuery } from "./trash-days-query.js";

/**
 * `DELETE /requests/:requestId/session-blobs[?trashDays=]`: deletes the caller's stored sessions
 * of a request (`stowage.deleteSessionBlobs`). By default they go to the caller's trash (kind
 * `storedSession`, one item per session id: `POST /trash/storedSession/:sessionId/restore` brings
 * them back byte for byte) until the sweep purges them the deployment's `STOWAGE_TRASH_DAYS` (7)
 * later, answering `{ requestId, trash: { records, purgeAfter } }`; with `trashDays=0` (or the
 * deployment's 0) they are deleted now with the request's activity, answering
 * `{ requestId, deleted }`. Another trash time is 400 (`TRASH_DAYS_FIXED`); a request the caller
 * stored nothing live for (another principal's look the same) is 404. The caller's deletion
 * audit (`GET /audit`) gets a row by `key:<keyId>`.
 */
export function sessionBlobDeletionRoutes(services: Pick<Services, "stowage">) {
  const app = new Hono<AppEnv>();
  app.delete("/requests/:requestId/session-blobs", async (c) => {
    const trashDays = trashDaysQuery(c.req.query("trashDays"));
    const report = await services.stowage.deleteSessionBlobs(c.get("principal"), c.req.param("requestId"), {
      signal: c.req.raw.signal,
      by: `key:${c.get("keyId")}`,
      ...(trashDays === undefined ? {} : { trashDays }),
    });
    return c.json(report);
  });
  return app;
}
