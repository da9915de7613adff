import { join } from "node:path";
import { copyEmbeddedDatabase } from "../../../../packages/storage-postgres/test/support/copy-embedded-database.js";

/**
 * Gives the data directory `dataDir` (`STOWAGE_DATA_DIR`) the run's migrated embedded database
 * (`<dataDir>/pglite`, where the app opens it), copied from the template the global setup made
 * (storage-postgres's test/support/embedded-database-template.ts), so that its first command does
 * not run initdb. Nothing is copied over a database already there. What a first start does is
 * still tested where it is the subject: `connectEmbedded`'s own tests, the demo, and the CLI tests
 * of a new data directory (cli-reads-create-nothing, cli-outside).
 */
export async function seedEmbeddedDatabase(dataDir: string): Promise<void> {
  await copyEmbeddedDatabase(join(dataDir, "pglite"));
}
