// Child process: one app process, as `serve.ts` starts it, that also measures how long its own
// event loop was held: the CPU time its main thread spent between two ticks of a timer (CPU time, not
// wall time, so that waiting for a core on a busy machine is not taken for a hold; the main thread's,
// not the process's, so that V8's background GC and compiler threads working beside the loop are not
// taken for a hold either: on two busy cores they made holds under 100 ms read up to 270 ms). Prints
// `{ url, key }` as one JSON line once it listens (`key`: a fresh API key of user `guard`); on
// SIGUSR2 prints `{ "loopDelayMaxMs": <longest hold since the last SIGUSR2> }` and starts measuring
// again; stops on SIGTERM.
// argv: <data dir>
import { readFileSync } from "node:fs";
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
/** Linux's per-thread scheduler figures; the main thread's id is the process's. Its first field is CPU time in ns. */
const MAIN_THREAD_SCHEDSTAT = `/proc/${process.pid}/task/${process.pid}/schedstat`;
const cpuMs = () => {
  try {
    return Number(readFileSync(MAIN_THREAD_SCHEDSTAT, "utf8").split(" ")[0]) / 1e6;
  } catch {
    // Not Linux: the whole process's CPU time, an upper bound of the main thread's.
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  }
};
let lastTick = cpuMs();
let longestHold = 0;
const ticks = setInterval(() => {
  const now = cpuMs();
  longestHold = Math.max(longestHold, now - lastTick);
  lastTick = now;
}, RESOLUTION_MS);
console.log(JSON.stringify({ url: server.url, key }));
process.on("SIGUSR2", () => {
  console.log(JSON.stringify({ loopDelayMaxMs: Math.max(longestHold, cpuMs() - lastTick) }));
  longestHold = 0;
});
process.once("SIGTERM", () => {
  clearInterval(ticks);
  server.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
