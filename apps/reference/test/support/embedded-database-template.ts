import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
// By path, not through the package: this process does not resolve the workspace's
// `@stowage/source` condition, and run-child.ts imports nothing but Node's modules.
import { runChild } from "../../../../tooling/test-support/src/run-child.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's migrated embedded database, which tests copy (seed-embedded-database.ts). */
    embeddedDatabaseTemplate: string;
  }
}

/**
 * Where the run's template is made, once per process: Vitest loads this module again for each of
 * a package's projects (shared, isolated), so the promise is kept on `globalThis` (six templates
 * in a `pnpm test` run without it, between this package and sessions). Made eagerly: a lazy
 * template, made by the first test that needs it, was made twice when two workers started at once.
 * Resolves to the template's directory.
 */
const MADE = Symbol.for("stowage.test.embeddedDatabaseTemplate");
const holder = globalThis as { [MADE]?: Promise<string> };

async function makeTemplate(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "stowage-db-template-"));
  const template = join(dir, "pglite");
  const child = await runChild(new URL("../children/embedded-database.ts", import.meta.url), [template]);
  if (child.code !== 0)
    throw new Error(`the embedded database template failed (${child.code}): ${child.stderr}`);
  return dir;
}

/**
 * Vitest global setup (the app's and the sessions package's): one migrated embedded database per
 * run, made by a child process (children/embedded-database.ts) before the first test, which every
 * test app and every CLI test's new data directory starts as a copy of. A new PGlite directory
 * costs 3–4 s of CPU (initdb in WebAssembly, then the migrations; 24 of them were ~100 s of the
 * app's suite) where copying one costs ~0.1 s. Removed after the run.
 */
export default async function setup(project: TestProject) {
  holder[MADE] ??= makeTemplate();
  const dir = await holder[MADE];
  project.provide("embeddedDatabaseTemplate", join(dir, "pglite"));
  return () => rm(dir, { recursive: true, force: true });
}
