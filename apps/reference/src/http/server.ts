import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { errorResponse, StowageError } from "@stowage/core";
import { countTokensExact } from "@stowage/hot-state";
import { type AppConfig, replicaWarnings } from "../config.js";
import { createServices, type Services } from "../services.js";
import { createHttpApp } from "./app.js";
import { jsonLogger, type RequestLogger } from "./request-log.js";

export interface RunningServer {
  url: string;
  port: number;
  services: Services;
  close(): Promise<void>;
}

/**
 * Binds the port first, then builds the services: with port 0 (tests, parallel demos) the public
 * URL that signed URLs are made for is only known once the socket is bound. Starts the TTL sweep of
 * session blobs; `close` stops everything.
 */
export async function startServer(
  config: AppConfig,
  options: { log?: RequestLogger } = {},
): Promise<RunningServer> {
  const log = options.log ?? jsonLogger();
  let handle: ((request: Request, env: unknown) => Response | Promise<Response>) | undefined;
  const server = serve({
    fetch: (request, env) =>
      handle
        ? handle(request, env)
        : errorResponse(new StowageError("UNAVAILABLE", "the server is starting; retry in a moment")),
    port: config.port,
    hostname: config.host,
  });
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", (err: NodeJS.ErrnoException) =>
      reject(
        err.code === "EADDRINUSE"
          ? new StowageError(
              "UNAVAILABLE",
              `port ${config.port} on ${config.host} is in use; set STOWAGE_PORT`,
              {
                cause: err,
              },
            )
          : err,
      ),
    );
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://${config.host}:${port}`;
  const stopServer = () =>
    new Promise<void>((resolve) => {
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      server.close(() => resolve());
    });

  let services: Services;
  try {
    services = await createServices(config.port === 0 ? { ...config, port, publicUrl: url } : config);
  } catch (err) {
    await stopServer();
    throw err;
  }
  // The tokenizer's vocabulary takes a few hundred milliseconds to load: here, while requests are
  // still answered "starting", not in the first request that counts, holding every other one.
  countTokensExact("");
  handle = createHttpApp(services, log).fetch;
  for (const warning of replicaWarnings(config)) log.error("not safe to run as replicas", { warning });

  const sweep = async () => {
    try {
      const deleted = await services.sessionBlobs.deleteExpired();
      if (deleted > 0) log.info("expired session blobs deleted", { deleted });
    } catch (err) {
      log.error("session blob sweep failed", { error: (err as Error).message });
    }
    const olderThanDays = services.config.uploadRetentionDays;
    if (olderThanDays === undefined) return;
    try {
      const swept = await services.uploads.sweepUploads({ olderThanDays });
      if (swept.uploads.length > 0) {
        log.info("uploads past their retention deleted", {
          uploads: swept.uploads.length,
          bytes: swept.deletedBytes,
        });
      }
    } catch (err) {
      log.error("upload retention sweep failed", { error: (err as Error).message });
    }
  };
  const timer = setInterval(sweep, config.sweepIntervalMs);
  timer.unref();
  return {
    url,
    port,
    services,
    async close() {
      clearInterval(timer);
      await stopServer();
      await services.close();
    },
  };
}
