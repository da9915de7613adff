// Child process: one app process, as `serve.ts` starts it, that also measures how long its own
// event loop was held: the CPU time this process spent between two ticks of a timer (CPU time, not
// wall time, so that waiting for a core on a busy machine is not taken for a hold). Prints
// `{ url, key }` as one JSON line once it listens (`key`: a fresh API key of user `guard`); on
// SIGUSR2 prints `{ "loopDelayMaxMs": <longest hold since the last SIGUSR2> }` and starts measuring
// again; stops on SIGTERM.
// argv: <data dir>
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
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
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
