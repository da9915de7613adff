// Child process: one app process (a replica) on the data directory and the configuration in its
// environment. Prints `{ url, key? }` as one JSON line once it listens (with `ISSUE_KEY_FOR` =
// `user:<id>`, a fresh API key of that principal), stops on SIGTERM.
// argv: <data dir>
import { loadConfig } from "../../src/config.js";
import { startServer } from "../../src/http/server.js";

const [dataDir] = process.argv.slice(2) as [string];
const env = { ...process.env, STOWAGE_DATA_DIR: dataDir, STOWAGE_PORT: "0" };
const server = await startServer(await loadConfig(env, dataDir), {
  log: { info: () => {}, error: (fields, message) => console.error(message, fields) },
});
const issueFor = process.env.ISSUE_KEY_FOR;
let key: string | undefined;
if (issueFor) {
  const [kind, id] = issueFor.split(":") as ["user" | "org", string];
  key = (await server.services.apiKeys.issue({ kind, id })).apiKey;
}
console.log(JSON.stringify({ url: server.url, ...(key ? { key } : {}) }));
process.once("SIGTERM", () => {
  server.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
