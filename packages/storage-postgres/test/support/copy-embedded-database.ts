import { cp, readFile, stat } from "node:fs/promises";
import { basename } from "node:path";
import { inject } from "vitest";
import type {} from "./embedded-database-template.js";

// The data directory lock (`stowage.lock`, `stowage.lock.json`) was the template maker's; a copy
// starts unlocked.
const notTheLock = (path: string) => !basename(path).startsWith("stowage.lock");

/**
 * Makes `dataDir` a copy of the run's migrated embedded database (embedded-database-template.ts),
 * for a test whose subject is not a first start; nothing is copied over a database already there.
 */
export async function copyEmbeddedDatabase(dataDir: string): Promise<void> {
  if (await stat(dataDir).catch(() => null)) return;
  await cp(inject("embeddedDatabaseTemplate"), dataDir, { recursive: true, filter: notTheLock });
}

/** The run's migrated embedded database as a dump, for `connectEmbedded({ loadDataDir })`. */
export async function migratedDump(): Promise<Blob> {
  return new Blob([await readFile(inject("embeddedDatabaseDump"))]);
}
