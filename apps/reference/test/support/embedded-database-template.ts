import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { connectEmbedded } from "@stowage/storage-postgres";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** An embedded database directory with every migration applied, made once per test run. */
    embeddedDatabaseTemplate: string;
  }
}

/** Where the app keeps its embedded database below its data directory (as `services.ts` opens it). */
const EMBEDDED_DATABASE_DIR = "pglite";

// The data directory lock (`stowage.lock`, `stowage.lock.json`) belongs to the process that held
// the template; a copy must start unlocked.
const notTheLock = (path: string) => !basename(path).startsWith("stowage.lock");

/**
 * Vitest global setup: one embedded database, created and migrated once, that every test app
 * starts from a copy of. A fresh PGlite directory costs 2.5–4 s of CPU (initdb in WebAssembly,
 * then the migrations) where opening a copy costs 0.4 s, and the app's suite starts about fifty
 * apps. What a first start does is still tested where it is the subject: `connectEmbedded`'s own
 * tests in storage-postgres and every CLI test that runs `stowage` in a new data directory.
 */
export default async function setup(project: TestProject) {
  const dir = await mkdtemp(join(tmpdir(), "stowage-db-template-"));
  const template = join(dir, EMBEDDED_DATABASE_DIR);
  const connection = await connectEmbedded({ dataDir: template });
  await connection.close();
  project.provide("embeddedDatabaseTemplate", template);
  return () => rm(dir, { recursive: true, force: true });
}

/** Puts a copy of the run's migrated embedded database where the app in `dataDir` opens its own. */
export async function copyEmbeddedDatabase(template: string, dataDir: string): Promise<void> {
  await cp(template, join(dataDir, EMBEDDED_DATABASE_DIR), { recursive: true, filter: notTheLock });
}
