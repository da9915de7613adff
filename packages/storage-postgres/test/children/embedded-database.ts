// Child process: makes the run's migrated embedded database (support/embedded-database-template.ts):
// a data directory, what `stowage` creates in a new data directory's `pglite/`, and a dump of it
// (`dumpDataDir("none")`, what `connectEmbedded({ loadDataDir })` starts from), then exits.
// argv: <directory to create> <dump file to write>
import { appendFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { connectEmbedded } from "../../src/connect-embedded.js";
import { pgliteOf } from "../support/pglite-of.js";

/**
 * The tests' databases keep 16 MB of shared buffers, not the 128 MB initdb writes: PGlite sets up
 * its shared memory on every start, and with 128 MB an open of a copy cost ~440 ms of CPU against
 * ~260 ms (2026-12-03); the tests open hundreds (every test app, every in-process `stowage`
 * command). Their data is a few megabytes; what they check does not depend on the buffer size.
 */
const TEST_SHARED_BUFFERS = "16MB";

const [dataDir, dumpFile] = process.argv.slice(2) as [string, string];
const made = await connectEmbedded({ dataDir });
await made.close();
await appendFile(join(dataDir, "postgresql.conf"), `\nshared_buffers = ${TEST_SHARED_BUFFERS}\n`);
const connection = await connectEmbedded({ dataDir });
const shown = await pgliteOf(connection).query<{ shared_buffers: string }>("SHOW shared_buffers");
if (shown.rows[0]?.shared_buffers !== TEST_SHARED_BUFFERS)
  throw new Error(`the template's shared_buffers is ${shown.rows[0]?.shared_buffers}`);
const dump = await pgliteOf(connection).dumpDataDir("none");
await writeFile(dumpFile, new Uint8Array(await dump.arrayBuffer()));
await connection.close();
