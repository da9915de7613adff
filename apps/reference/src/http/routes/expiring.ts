import { describeValue, StowageError } from "@stowage/core";
import { Hono } from "hono";
import type { Services } from "../../services.js";
import { parseIsoTime, parseSpanMs } from "../../time-input.js";
import { type AppEnv, jsonBody } from "../context.js";

/** The window `GET /expiring` looks ahead when none is given: 7 days. */
const DEFAULT_WITHIN = "7d";

/**
 * `GET /expiring?within=3d`: what the caller holds that expires within the window (`3d`, `12h`,
 * `90m`; default 7 days), soonest first: `{ expiring: [{ kind, id, expiresAt, bytes }] }`.
 * `PATCH /expiring/:kind/:id { expiresAt }`: sets when one of the caller's stored sessions
 * (`sessionBlobs`, by session id) expires, within the deployment's maximum
 * (`STOWAGE_MAX_EXPIRY_DAYS`; beyond it INVALID_INPUT `EXPIRY_TOO_LATE` with the limit).
 * Another principal's, or none, is 404.
 */
export function expiringRoutes(services: Pick<Services, "stowage">) {
  const app = new Hono<AppEnv>();
  app.get("/expiring", async (c) => {
    const raw = c.req.query("within") ?? DEFAULT_WITHIN;
    const withinMs = parseSpanMs(raw);
    if (withinMs === undefined) {
      throw new StowageError(
        "INVALID_INPUT",
        `within must be a span such as 3d, 12h or 90m, got ${JSON.stringify(raw.slice(0, 64))}`,
      );
    }
    const expiring = await services.stowage.expiring(c.get("principal"), withinMs, {
      signal: c.req.raw.signal,
    });
    return c.json({ expiring });
  });
  app.patch("/expiring/:kind/:id", async (c) => {
    const body = (await jsonBody(c)) as { expiresAt?: unknown } | null;
    const given = body?.expiresAt;
    const expiresAt = typeof given === "string" ? parseIsoTime(given) : undefined;
    if (expiresAt === undefined) {
      throw new StowageError(
        "INVALID_INPUT",
        `body must be { expiresAt: an ISO 8601 time }, got expiresAt ${describeValue(given)}`,
      );
    }
    const extended = await services.stowage.extendExpiry(
      c.get("principal"),
      c.req.param("kind"),
      c.req.param("id"),
      expiresAt,
      { signal: c.req.raw.signal },
    );
    return c.json(extended);
  });
  return app;
}
