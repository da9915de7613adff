import { cp, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { inject } from "vitest";
import type {} from "./embedded-database-template.js";

// The data directory lock (`stowage.lock`, `stowage.lock.json`) was the template maker's; a copy
// starts unlocked.
const notTheLock = (path: string) => !basename(path).startsWith("stowage.lock");

/**
 * Gives the data directory `dataDir` (`STOWAGE_DATA_DIR`) the run's migrated embedded database
 * (`<dataDir>/pglite`, where the app opens it), copied from the template the global setup made
 * (embedded-database-template.ts), so that its first command does not run initdb. Nothing is
 * copied over a database already there. What a first start does is still tested where it is the
 * subject: `connectEmbedded`'s own tests, the demo, and the CLI tests of a new data directory
 * (cli-reads-create-nothing, cli-outside).
 */
export async function seedEmbeddedDatabase(dataDir: string): Promise<void> {
  const database = join(dataDir, "pglite");
  if (await stat(database).catch(() => null)) return;
  await cp(inject("embeddedDatabaseTemplate"), database, { recursive: true, filter: notTheLock });
}
