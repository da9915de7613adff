import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { parseBearerToken, StowageError } from "@stowage/core";
import { sql } from "drizzle-orm";
import { Hono } from "hono";
import type { Services } from "../services.js";
import type { AppEnv } from "./context.js";
import type { Drain } from "./drain.js";

/** How long one readiness check may take before it counts as failed. */
const READY_CHECK_TIMEOUT_MS = 2_000;

type Check = () => Promise<unknown>;

/** `check` within the timeout: `ok`, or the error's code (never its message: the answer is public). */
async function outcome(check: Check): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StowageError("UNAVAILABLE", "timed out")), READY_CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([check(), timeout]);
    return "ok";
  } catch (err) {
    return StowageError.is(err) ? err.code : "UNAVAILABLE";
  } finally {
    clearTimeout(timer);
  }
}

/** A message published on the notifier comes back through its subscription: LISTEN works, not only NOTIFY. */
async function notifierRoundTrip(notifier: Services["notifier"]): Promise<void> {
  const topic = `stowage.readyz.${randomUUID()}`;
  let heard: () => void = () => {};
  const back = new Promise<void>((resolve) => {
    heard = resolve;
  });
  const unsubscribe = await notifier.subscribe(topic, () => heard());
  try {
    await notifier.publish(topic, "ping");
    await back;
  } finally {
    await unsubscribe();
  }
}

/** Whether `given` is the metrics token, compared in constant time (by digest, so lengths do not show). */
function isMetricsToken(given: string | undefined, token: string): boolean {
  if (given === undefined) return false;
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return timingSafeEqual(digest(given), digest(token));
}

/**
 * What an operator's tools read, answered before any API key is looked at:
 * - `GET /readyz`: 200 when the database answers, the shared store answers and a notification comes
 *   back through the notifier; 503 with each check's outcome otherwise, and while the server drains.
 * - `GET /metrics`: Prometheus text, only with `STOWAGE_METRICS_TOKEN` set and sent as
 *   `Authorization: Bearer <token>` (never an API key: a tenant's key sees no other tenant's
 *   figures). Unset, the route does not exist (404): metrics are never public by default.
 * (`GET /healthz`, alive, is with the API's routes.)
 */
export function operatorRoutes(services: Services, drain: Drain) {
  const app = new Hono<AppEnv>();
  const { metricsToken } = services.config;
  if (metricsToken !== undefined) services.metrics.collectProcessMetrics();

  app.get("/readyz", async (c) => {
    if (drain.draining) return c.json({ ready: false, draining: true }, 503);
    const [database, shared, notifier] = await Promise.all([
      outcome(() => services.database.db.execute(sql`SELECT 1`)),
      outcome(() => services.shared.head("stowage-readyz-probe")),
      outcome(() => notifierRoundTrip(services.notifier)),
    ]);
    const checks = { database, shared, notifier };
    const ready = Object.values(checks).every((value) => value === "ok");
    return c.json({ ready, checks }, ready ? 200 : 503);
  });

  app.get("/metrics", async (c) => {
    if (metricsToken === undefined) {
      throw new StowageError(
        "NOT_FOUND",
        "no route for GET /metrics (set STOWAGE_METRICS_TOKEN to serve it)",
      );
    }
    let given: string | undefined;
    try {
      given = parseBearerToken(c.req.header("authorization"));
    } catch {
      given = undefined;
    }
    if (!isMetricsToken(given, metricsToken)) {
      throw new StowageError(
        "UNAUTHORIZED",
        "GET /metrics needs `Authorization: Bearer <STOWAGE_METRICS_TOKEN>`",
      );
    }
    const { registry } = services.metrics;
    return c.body(await registry.metrics(), 200, { "content-type": registry.contentType });
  });
  return app;
}
