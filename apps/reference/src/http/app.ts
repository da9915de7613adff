import { getConnInfo } from "@hono/node-server/conninfo";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Services } from "../services.js";
import { viewerRoutes } from "../viewer/viewer-routes.js";
import type { AppEnv } from "./context.js";
import { errorResponse } from "./errors.js";
import { tooLarge } from "./limits.js";
import { rateLimit } from "./rate-limit.js";
import { type RequestLogger, requestLog } from "./request-log.js";
import { agentSessionRoutes } from "./routes/agent-sessions.js";
import { blobRoutes } from "./routes/blobs.js";
import { contextRoutes } from "./routes/context.js";
import { sessionBlobRoutes } from "./routes/session-blobs.js";
import { threadRoutes } from "./routes/threads.js";
import { uploadRoutes } from "./routes/uploads.js";

// Routes whose bodies are limited by their own rule: signed uploads (by the signature), blobs
// (by the file limit), session blobs (by the session limit).
const OWN_LIMIT = [/^\/direct\//, /^\/blobs$/, /^\/requests\/[^/]+\/session-blobs$/];

/** The HTTP API: thin routes over the packages, JSON errors with StowageError codes. */
export function createHttpApp(services: Services, log: RequestLogger) {
  const { config } = services;
  const app = new Hono<AppEnv>();
  app.use(requestLog(log));
  app.use(
    rateLimit(config.rateLimitPerMinute, (c) => {
      // Per API key where one is sent (its public id part), else per client address.
      const token = c.req.header("authorization")?.replace(/^Bearer\s+/i, "");
      return token ? `key:${token.slice(0, 24)}` : `ip:${getConnInfo(c).remote.address ?? "unknown"}`;
    }),
  );
  const generalLimit = bodyLimit({
    maxSize: config.bodyLimitBytes,
    onError: tooLarge(config.bodyLimitBytes),
  });
  app.use(async (c, next) => {
    if (OWN_LIMIT.some((pattern) => pattern.test(c.req.path))) return next();
    return generalLimit(c, next);
  });
  app.onError((err, c) => errorResponse(c, err, log));
  app.notFound((c) =>
    c.json({ error: { code: "NOT_FOUND", message: `no route for ${c.req.method} ${c.req.path}` } }, 404),
  );

  app.get("/healthz", async (c) =>
    c.json({
      ok: true,
      database: services.database.driver,
      uploads: config.s3 ? "s3" : "fs-signed",
      objects: "fs",
    }),
  );
  app.route("/", uploadRoutes(services));
  app.route("/", sessionBlobRoutes(services));
  app.route("/", threadRoutes(services));
  app.route("/", blobRoutes(services));
  app.route("/", agentSessionRoutes(services));
  app.route("/", contextRoutes(services));
  app.route("/", viewerRoutes());
  return app;
}
