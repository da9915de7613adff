import { createMemoryObjectStore } from "@stowage/core";
import { usageSourceFromStore } from "@stowage/uploads";
import { connectPostgres } from "../../src/connect-postgres.js";
import { createPostgresQuotaLedger } from "../../src/uploads/quota-ledger.js";

// A second app process asking for upload room in the same session: argv = url, schema, scope,
// number of reservations, bytes each, limit. Prints "ready", waits for SIGUSR1, reserves all at
// once, prints {"granted":[bytes…]}.
const [url, schema, scope, count, bytes, limit] = process.argv.slice(2);
const connection = await connectPostgres({ url: url!, schema: schema!, maxConnections: Number(count) });
const ledger = createPostgresQuotaLedger({ db: connection.db });
const source = usageSourceFromStore(createMemoryObjectStore());
const go = new Promise((resolve) => process.once("SIGUSR1", resolve));
process.stdout.write("ready\n");
await go;
const results = await Promise.allSettled(
  Array.from({ length: Number(count) }, (_, i) =>
    ledger.reserve({
      scope: scope!,
      key: `${scope}child-${i}.bin`,
      bytes: Number(bytes),
      limitBytes: Number(limit),
      urlExpiresAt: new Date(Date.now() + 600_000),
      source,
    }),
  ),
);
const granted = results.flatMap((result) => (result.status === "fulfilled" ? [Number(bytes)] : []));
const unexpected = results.flatMap((result) =>
  result.status === "rejected" && result.reason?.code !== "QUOTA_EXCEEDED" ? [String(result.reason)] : [],
);
await connection.close();
process.stdout.write(`${JSON.stringify({ granted, unexpected })}\n`);
