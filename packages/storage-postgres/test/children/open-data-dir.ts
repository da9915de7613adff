import { StowageError } from "@stowage/core";
import { connectEmbedded } from "../../src/connect-embedded.js";
import { createPostgresObjectStore } from "../../src/object-store.js";

// Opens an embedded database once, as `stowage session capture` does: argv = data directory, row
// name. Stores its row and prints the rows it sees (exit 0), or prints the error (exit 2).
const [dataDir, row] = process.argv.slice(2);
try {
  const connection = await connectEmbedded({ dataDir: dataDir! });
  const store = createPostgresObjectStore({ db: connection.db });
  await store.put(`rows/${row}`, new TextEncoder().encode(row!));
  const rows: string[] = [];
  for await (const item of store.iterate({ prefix: "rows/" })) rows.push(item.key);
  await connection.close();
  process.stdout.write(JSON.stringify({ rows }));
} catch (err) {
  if (!StowageError.is(err)) throw err;
  process.stdout.write(JSON.stringify({ code: err.code, reason: err.reason, details: err.details }));
  process.exitCode = 2;
}
