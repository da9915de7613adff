// Child process: one app process, as `serve.ts` starts it, that also measures how long its own
// event loop was held (`perf_hooks.monitorEventLoopDelay`). Prints `{ url, key }` as one JSON line
// once it listens (`key`: a fresh API key of user `guard`); on SIGUSR2 prints
// `{ "loopDelayMaxMs": <longest delay since the last SIGUSR2> }` and starts measuring again; stops
// on SIGTERM.
// argv: <data dir>
import { monitorEventLoopDelay } from "node:perf_hooks";
import { loadConfig } from "../../src/config.js";
import { startServer } from "../../src/http/server.js";

/** Milliseconds between the histogram's samples: a held loop shows up to within this. */
const RESOLUTION_MS = 10;

const [dataDir] = process.argv.slice(2) as [string];
const env = { ...process.env, STOWAGE_DATA_DIR: dataDir, STOWAGE_PORT: "0" };
const server = await startServer(await loadConfig(env, dataDir), {
  log: { info: () => {}, error: (message, fields) => console.error(message, fields) },
});
const key = (await server.services.apiKeys.issue({ kind: "user", id: "guard" })).apiKey;
const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
delay.enable();
console.log(JSON.stringify({ url: server.url, key }));
process.on("SIGUSR2", () => {
  console.log(JSON.stringify({ loopDelayMaxMs: delay.max / 1e6 }));
  delay.reset();
});
process.once("SIGTERM", () => {
  delay.disable();
  server.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
