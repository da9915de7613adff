// Child process: makes a migrated embedded database (what `stowage` creates in a new data
// directory's `pglite/`) at the path given, then exits. The run's template (see
// support/embedded-database-template.ts).
// argv: <directory to create>
import { connectEmbedded } from "@stowage/storage-postgres";

const [dataDir] = process.argv.slice(2) as [string];
const connection = await connectEmbedded({ dataDir });
await connection.close();
