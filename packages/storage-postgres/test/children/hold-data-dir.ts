import { connectEmbedded } from "../../src/connect-embedded.js";
import { createPostgresObjectStore } from "../../src/object-store.js";

// Holds an embedded database open, as `stowage serve` does: argv = data directory, row name.
// Prints "ready" once its row is stored; closes and exits 0 on SIGTERM.
const [dataDir, row] = process.argv.slice(2);
const connection = await connectEmbedded({ dataDir: dataDir! });
await createPostgresObjectStore({ db: connection.db }).put(`rows/${row}`, new TextEncoder().encode(row!));
const alive = setInterval(() => {}, 1000);
process.on("SIGTERM", () => {
  clearInterval(alive);
  void connection.close().then(() => process.exit(0));
});
process.stdout.write("ready\n");
