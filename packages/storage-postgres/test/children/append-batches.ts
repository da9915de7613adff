import { connectPostgres } from "../../src/connect-postgres.js";
import { createPostgresSessionStore } from "../../src/sessions/session-store.js";

// A separate process appending to the same session as its siblings: argv = url, schema,
// projectKey, sessionId, worker id, batches, entries per batch.
const [url, schema, projectKey, sessionId, worker, batches, perBatch] = process.argv.slice(2);
const connection = await connectPostgres({ url: url!, schema: schema!, maxConnections: 2 });
const store = createPostgresSessionStore({ db: connection.db });
let n = 0;
for (let batch = 0; batch < Number(batches); batch++) {
  const entries = Array.from({ length: Number(perBatch) }, () => {
    n++;
    return {
      type: n % 7 === 0 ? "custom-title" : "user",
      uuid: `w${worker}-${String(n).padStart(6, "0")}`,
      timestamp: new Date(Date.UTC(2026, 0, 1) + Number(worker) * 1e9 + n * 1000).toISOString(),
      ...(n % 7 === 0
        ? { customTitle: `title from ${worker} #${n}` }
        : { message: { role: "user", content: `prompt ${worker}/${n}` } }),
      worker: Number(worker),
      n,
    };
  });
  await store.append({ projectKey: projectKey!, sessionId: sessionId! }, entries);
}
await connection.close();
