import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** Where the run's migrated embedded database is kept once the first test app made it. */
    embeddedDatabaseTemplate: string;
  }
}

/**
 * Vitest global setup: a directory for the one embedded database that every test app of the run
 * starts from a copy of (`test-app.ts` makes it on first use, in a test worker: this process does
 * not resolve the workspace's `@stowage/source` condition, so it imports no package). Removed
 * after the run.
 */
export default async function setup(project: TestProject) {
  const dir = await mkdtemp(join(tmpdir(), "stowage-db-template-"));
  project.provide("embeddedDatabaseTemplate", join(dir, "pglite"));
  return () => rm(dir, { recursive: true, force: true });
}
