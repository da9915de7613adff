// Child process: one app process, as `serve.ts` starts it, that also measures how long its own
// event loop was held (test-support's `watchLoopHolds`: the main thread's CPU time between two ticks
// of a timer). Prints `{ url, key, parseMs }` as one JSON line once it listens (`key`: a fresh API
// key of user `guard`; `parseMs`: what decoding and parsing a 14 MiB JSON body costs this machine's
// main thread, a step no server can slice); on SIGUSR2 prints, since the last SIGUSR2, `{
// "loopDelayMaxMs", "blockedMaxMs", "waitedForCoresMs" }` (the longest hold in CPU time, the longest
// hold off the CPU not waiting for a core, the whole wait of its threads for a core) and starts
// measuring again; stops on SIGTERM.
// argv: <data dir>
import { jsonParseCostMs, watchLoopHolds } from "@stowage/test-support";
import { loadConfig } from "../../src/config.js";
import { startServer } from "../../src/http/server.js";

/** Milliseconds between the timer's ticks: a held loop shows up to within this. */
const RESOLUTION_MS = 10;

const [dataDir] = process.argv.slice(2) as [string];
const env = { ...process.env, STOWAGE_DATA_DIR: dataDir, STOWAGE_PORT: "0" };
const server = await startServer(await loadConfig(env, dataDir), {
  log: { info: () => {}, error: (message, fields) => console.error(message, fields) },
});
const key = (await server.services.apiKeys.issue({ kind: "user", id: "guard" })).apiKey;

const parseMs = jsonParseCostMs();
const holds = watchLoopHolds(RESOLUTION_MS);
console.log(JSON.stringify({ url: server.url, key, parseMs }));
process.on("SIGUSR2", () => {
  console.log(
    JSON.stringify({
      loopDelayMaxMs: holds.longest(),
      blockedMaxMs: holds.longestBlocked(),
      waitedForCoresMs: holds.waitedForCores(),
    }),
  );
  holds.restart();
});
process.once("SIGTERM", () => {
  holds.stop();
  server.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
