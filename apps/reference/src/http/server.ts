import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { errorResponse, StowageError } from "@stowage/core";
import { countTokensExact } from "@stowage/hot-state";
import { type AppConfig, replicaWarnings } from "../config.js";
import { createServices, type Services } from "../services.js";
import { createHttpApp } from "./app.js";
import { createDrain } from "./drain.js";
import { jsonLogger, type RequestLogger } from "./request-log.js";

/** How long a stopping server lets the last bytes of its answers out before it cuts the connections left. */
const FLUSH_MS = 100;

export interface RunningServer {
  url: string;
  port: number;
  services: Services;
  /**
   * Stops: takes no new connection, ends every event stream (a thread's tail told `resync`), waits
   * for the requests being answered (an upload's completion, a signed PUT) up to
   * `config.shutdownGraceMs`, then closes what is left and the services.
   */
  close(): Promise<void>;
}

/**
 * Binds the port first, then builds the services: with port 0 (tests, parallel demos) the public
 * URL that signed URLs are made for is only known once the socket is bound. Starts the sweep of
 * every store (`stowage.sweep`: expired session blobs, uploads past their retention); `close` stops everything.
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
  const connections = server as unknown as {
    closeAllConnections?: () => void;
    closeIdleConnections?: () => void;
  };
  const stopServer = () =>
    new Promise<void>((resolve) => {
      connections.closeAllConnections?.();
      server.close(() => resolve());
    });
  const drain = createDrain();

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
  handle = createHttpApp(services, log, drain).fetch;
  for (const warning of replicaWarnings(config)) log.error({ warning }, "not safe to run as replicas");

  // Every store's expiry and retention (the deployment's table says which): each logged on its own.
  const sweep = async () => {
    for (const [store, outcome] of Object.entries(await services.stowage.sweep())) {
      if ("failed" in outcome) {
        services.metrics.sweepRun(store, "failed", 0);
        log.error({ store, error: (outcome.failed as Error).message }, "sweep failed");
      } else {
        services.metrics.sweepRun(store, "ok", outcome.removed);
        // One line per store per run, 0 included: a quiet sweep is told from one that stopped running.
        log.info({ store, removed: outcome.removed, durationMs: outcome.durationMs }, "swept");
      }
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
      drain.start();
      // No new connection; idle keep-alive ones go now, busy ones once their request is answered.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      connections.closeIdleConnections?.();
      const answered = await drain.settled(config.shutdownGraceMs);
      if (!answered)
        log.error({ graceMs: config.shutdownGraceMs }, "requests still running at shutdown were cut");
      // Connections whose last answer went out are idle now; a moment for the last bytes of the rest.
      connections.closeIdleConnections?.();
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, FLUSH_MS).unref())]);
      connections.closeAllConnections?.();
      await closed;
      await services.close();
    },
  };
}
