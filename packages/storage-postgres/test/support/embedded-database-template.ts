import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
// By path, not through the package: this process does not resolve the workspace's
// `@stowage/source` condition, and run-child.ts imports nothing but Node's modules and its
// sibling compiled-sources.ts (which loads esbuild).
import { runChild } from "../../../../tooling/test-support/src/run-child.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's migrated embedded database directory, which tests copy (`copyEmbeddedDatabase`). */
    embeddedDatabaseTemplate: string;
    /** A dump of it (`dumpDataDir("none")`), which in-memory databases load (`loadDataDir`). */
    embeddedDatabaseDump: string;
  }
}

interface Template {
  dir: string;
  database: string;
  dump: string;
}

/**
 * Where the run's template is made, once per process: Vitest loads this module again for each of
 * a package's projects (shared, isolated), so the promise is kept on `globalThis` (six templates
 * in a `pnpm test` run without it, between the app and the sessions package). Made eagerly: a
 * lazy template, made by the first test that needs it, was made twice when two workers started
 * at once.
 */
const MADE = Symbol.for("stowage.test.embeddedDatabaseTemplate");
const holder = globalThis as { [MADE]?: Promise<Template> };

async function makeTemplate(): Promise<Template> {
  const dir = await mkdtemp(join(tmpdir(), "stowage-db-template-"));
  const template = { dir, database: join(dir, "pglite"), dump: join(dir, "migrated.tar") };
  const child = await runChild(new URL("../children/embedded-database.ts", import.meta.url), [
    template.database,
    template.dump,
  ]);
  if (child.code !== 0)
    throw new Error(`the embedded database template failed (${child.code}): ${child.stderr}`);
  return template;
}

/**
 * Vitest global setup (this package's, the app's and the sessions package's): one migrated
 * embedded database per run, made by a child process (children/embedded-database.ts) before the
 * first test, as a data directory and as a dump. A new PGlite database runs initdb in
 * WebAssembly and then the migrations: 3–7 s of CPU, by the machine, where copying the directory
 * costs ~0.1 s and loading the dump a quarter of a new one. What a first start does is still
 * tested where it is the subject (`connectEmbedded`'s own tests of a new directory, the demo, the
 * CLI tests of a new data directory). Removed after the run.
 */
export default async function setup(project: TestProject) {
  holder[MADE] ??= makeTemplate();
  const template = await holder[MADE];
  project.provide("embeddedDatabaseTemplate", template.database);
  project.provide("embeddedDatabaseDump", template.dump);
  return () => rm(template.dir, { recursive: true, force: true });
}
