// Child process: makes the run's migrated embedded database (support/embedded-database-template.ts):
// a data directory, what `stowage` creates in a new data directory's `pglite/`, and a dump of it
// (`dumpDataDir("none")`, what `connectEmbedded({ loadDataDir })` starts from), then exits.
// argv: <directory to create> <dump file to write>
import { writeFile } from "node:fs/promises";
import { connectEmbedded } from "../../src/connect-embedded.js";
import { pgliteOf } from "../support/pglite-of.js";

const [dataDir, dumpFile] = process.argv.slice(2) as [string, string];
const connection = await connectEmbedded({ dataDir });
const dump = await pgliteOf(connection).dumpDataDir("none");
await writeFile(dumpFile, new Uint8Array(await dump.arrayBuffer()));
await connection.close();
