import { StowageError } from "@stowage/core";
import { Hono } from "hono";
import { parseIsoTime } from "../../time-input.js";
import { type AppEnv, integerQuery } from "../context.js";

/** `since` as the route takes it: an ISO 8601 time, INVALID_INPUT naming what was given otherwise. */
function sinceQuery(raw: string | undefined): Date | undefined {
  if (raw === undefined) return undefined;
  const since = parseIsoTime(raw);
  if (since === undefined) {
    throw new StowageError(
      "INVALID_INPUT",
      `since must be an ISO 8601 time, got ${JSON.stringify(raw.slice(0, 64))}`,
    );
  }
  return since;
}

/**
 * `GET /audit?since=&cursor=&limit=`: what was deleted of the caller's, oldest first (the deletion
 * audit of `@stowage/tenancy`: kind, id, bytes, by, at, reason; never content). Read in the
 * caller's namespace only: another principal's rows are simply not there.
 */
export function deletionAuditRoutes() {
  const app = new Hono<AppEnv>();
  app.get("/audit", async (c) => {
    const since = sinceQuery(c.req.query("since"));
    const cursor = c.req.query("cursor");
    const limit = integerQuery(c, "limit");
    const page = await c.get("tenant").deletionAudit.list({
      ...(since === undefined ? {} : { since }),
      ...(cursor === undefined ? {} : { cursor }),
      ...(limit === undefined ? {} : { limit }),
      signal: c.req.raw.signal,
    });
    return c.json(page);
  });
  return app;
}
