import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
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
  database: string;
  dump: string;
}

const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const CHILD = new URL("../children/embedded-database.ts", import.meta.url);
/** Where templates are kept between the packages' test processes and runs, by {@link templateKey}. */
const CACHE_DIR = join(REPO_ROOT, "node_modules", ".cache", "stowage-embedded-database");
/** Written last into a template: a directory without it is an interrupted build. */
const COMPLETE = "complete";
/** A template of other sources is removed once it has not been used for this long. */
const STALE_MS = 24 * 60 * 60 * 1000;

/** Every file under `directory`, as paths relative to the repository, sorted. */
async function filesUnder(directory: string): Promise<string[]> {
  const entries = await readdir(join(REPO_ROOT, directory), { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(REPO_ROOT, join(entry.parentPath, entry.name)))
    .sort();
}

/**
 * What the template is made from: every package's sources (the migrations, connectEmbedded and
 * what they import), the child that makes it, the lockfile (PGlite's version) and Node's version.
 */
async function templateKey(): Promise<string> {
  const packages = await readdir(join(REPO_ROOT, "packages"));
  const sources = (
    await Promise.all(
      packages.sort().map((name) => filesUnder(join("packages", name, "src")).catch(() => [])),
    )
  ).flat();
  const inputs = [
    ...sources,
    relative(REPO_ROOT, fileURLToPath(CHILD)),
    "packages/storage-postgres/test/support/pglite-of.ts",
    "pnpm-lock.yaml",
  ];
  const hash = createHash("sha256").update(process.version);
  for (const path of inputs) hash.update(`\0${path}\0`).update(await readFile(join(REPO_ROOT, path)));
  return hash.digest("hex").slice(0, 32);
}

/**
 * The template, looked up or made once per process: Vitest loads this module again for each of
 * a package's projects (shared, isolated), so the promise is kept on `globalThis`. Made eagerly:
 * a lazy template, made by the first test that needs it, was made twice when two workers started
 * at once.
 */
const MADE = Symbol.for("stowage.test.embeddedDatabaseTemplate");
const holder = globalThis as { [MADE]?: Promise<Template> };

const templateIn = (dir: string): Template => ({
  database: join(dir, "pglite"),
  dump: join(dir, "migrated.tar"),
});

/** Templates of other sources not used for a day: a run that could still copy one has long ended. */
async function removeStale(key: string): Promise<void> {
  for (const name of await readdir(CACHE_DIR).catch(() => [] as string[])) {
    if (name === key) continue;
    const path = join(CACHE_DIR, name);
    const info = await stat(path).catch(() => undefined);
    if (info && Date.now() - info.mtimeMs > STALE_MS) await rm(path, { recursive: true, force: true });
  }
}

/**
 * The template of the current sources: the one a test process of this or an earlier run made, or
 * made now by a child process (children/embedded-database.ts) in a directory of its own and
 * renamed into place whole. Two processes that both find none make one each; the second rename
 * fails on the first's directory, and the second uses that one.
 */
async function makeTemplate(): Promise<Template> {
  const key = await templateKey();
  const dir = join(CACHE_DIR, key);
  if (await stat(join(dir, COMPLETE)).catch(() => undefined)) {
    // Its time says it is in use (see removeStale).
    const now = new Date();
    await utimes(dir, now, now).catch(() => {});
    return templateIn(dir);
  }
  await mkdir(CACHE_DIR, { recursive: true });
  await removeStale(key);
  const building = await mkdtemp(join(CACHE_DIR, `${key}.building-`));
  try {
    const made = templateIn(building);
    const child = await runChild(CHILD, [made.database, made.dump]);
    if (child.code !== 0)
      throw new Error(`the embedded database template failed (${child.code}): ${child.stderr}`);
    await writeFile(join(building, COMPLETE), "");
    await rename(building, dir).catch((err: NodeJS.ErrnoException) => {
      // Another process renamed its own first: the same sources, so the same template.
      if (err.code !== "ENOTEMPTY" && err.code !== "EEXIST") throw err;
    });
  } finally {
    await rm(building, { recursive: true, force: true });
  }
  return templateIn(dir);
}

/**
 * Vitest global setup (this package's, the app's and the sessions package's): one migrated
 * embedded database, made by a child process before the first test, as a data directory and as a
 * dump. A new PGlite database runs initdb in WebAssembly and then the migrations: 3–7 s of CPU,
 * by the machine, where copying the directory costs ~0.1 s and loading the dump a quarter of a
 * new one. The template is kept under `node_modules/.cache` by a hash of what it is made from,
 * so the three packages of a `pnpm test` run (and later runs) make it once, not once each (about
 * 6 s of CPU each). What a first start does is still tested where it is the subject
 * (`connectEmbedded`'s own tests of a new directory, the demo, the CLI tests of a new data
 * directory).
 */
export default async function setup(project: TestProject) {
  holder[MADE] ??= makeTemplate();
  const template = await holder[MADE];
  project.provide("embeddedDatabaseTemplate", template.database);
  project.provide("embeddedDatabaseDump", template.dump);
}
