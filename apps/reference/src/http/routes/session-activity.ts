import { StowageError } from "@stowage/core";
import { Hono } from "hono";
import type { AppEnv } from "../context.js";

/**
 * The request's last capture and last restore (a read of `latest`, or the CLI's), each with the
 * fields of its log line and when it finished (`observability/session-activity-log.ts`);
 * NOT_FOUND when neither happened in the caller's tenant (another principal's request looks the same).
 */
export function sessionActivityRoutes() {
  const app = new Hono<AppEnv>();
  app.get("/requests/:requestId/session-blobs/activity", async (c) => {
    const requestId = c.req.param("requestId");
    const activity = await c.get("tenant").sessionActivity.read(requestId, { signal: c.req.raw.signal });
    if (!activity.lastCapture && !activity.lastRestore) {
      throw new StowageError("NOT_FOUND", `no capture or restore recorded for request ${requestId}`);
    }
    return c.json(activity);
  });
  return app;
}
