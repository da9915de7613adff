import { createHash, randomUUID } from "node:crypto";
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

// A child process of a test used to start its TypeScript through tsx's loader: about 0.3 s of CPU
// more than the same code compiled (tsx's hooks see every module the child loads, on a thread of
// their own), and a second more on a machine where new memory is dear. `pnpm test` starts a few
// hundred such children. Here the workspace's sources are compiled once (esbuild, file by file,
// no bundling: every module stays a module, every import is Node's own) into a copy of the
// repository's layout, and children run that: what a user of the published packages runs is
// compiled JavaScript too.

/**
 * The repository: where this file's root `package.json` really is. In a compiled copy that file
 * is a link to the repository's, so a child running the copy finds the repository too.
 */
const REPOSITORY = `${dirname(realpathSync(fileURLToPath(new URL("../../../package.json", import.meta.url))))}${sep}`;
/** The root this file runs from: the repository, or in a child a compiled copy of it. */
const RUNNING_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
/** The folders holding the workspace's packages. */
const WORKSPACE_GROUPS = ["packages", "apps", "tooling"];
/** Never copied: built output and what the package manager or a test left. */
const SKIPPED = new Set(["node_modules", "dist", "coverage"]);
/** Where the compiled copies live, one folder per state of the sources. */
const CACHE = join(tmpdir(), "stowage-compiled-sources");
const COMPLETE_MARKER = ".complete";
/** A build another process started and left this long ago is taken for dead. */
const STALE_BUILD_MS = 120_000;
/** Copies of sources that no longer exist are removed after a day. */
const OLD_COPY_MS = 24 * 60 * 60 * 1000;

/** esbuild, loaded when a copy is named or built (not by a child that only reads `sourceUrl`). */
const esbuild = () =>
  createRequire(new URL("../package.json", import.meta.url))("esbuild") as typeof import("esbuild");

/** A source file to compile: not a declaration file. */
const isSource = (name: string) => name.endsWith(".ts") && !name.endsWith(".d.ts");

/** The workspace's package folders, relative to the repository. */
function workspaceDirs(): string[] {
  return WORKSPACE_GROUPS.flatMap((group) =>
    readdirSync(join(REPOSITORY, group), { withFileTypes: true })
      .filter(
        (entry) => entry.isDirectory() && existsSync(join(REPOSITORY, group, entry.name, "package.json")),
      )
      .map((entry) => join(group, entry.name)),
  );
}

/**
 * Every file under `dir` (relative to the repository) but the skipped folders' and hidden ones'
 * (a data directory a developer's CLI run left), depth first.
 */
function filesUnder(dir: string, into: string[] = []): string[] {
  for (const entry of readdirSync(join(REPOSITORY, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED.has(entry.name) && !entry.name.startsWith(".")) filesUnder(path, into);
    } else into.push(path);
  }
  return into;
}

/** A file the copy holds compiled or rewritten; every other one is a link, always current. */
const isCompiled = (file: string) => isSource(file) || file.endsWith(`${sep}package.json`);

/**
 * Names the state of what is compiled: each source's and manifest's path, size and change time,
 * the compiler's version and the repository's place (a test that writes other files under a
 * package changes nothing).
 */
function sourcesKey(files: readonly string[]): string {
  // The repository too: a copy's links lead to one clone's files and node_modules.
  const hash = createHash("sha256").update(`${esbuild().version}\0${REPOSITORY}\n`);
  for (const file of files.filter(isCompiled)) {
    const stats = statSync(join(REPOSITORY, file));
    hash.update(`${file}\0${stats.size}\0${stats.mtimeMs}\n`);
  }
  return hash.digest("hex").slice(0, 20);
}

/** A package manifest whose exports name the compiled `.js` files where they named `.ts` sources. */
function compiledManifest(text: string): string {
  const toJs = (value: unknown): unknown => {
    if (typeof value === "string")
      return /^\.\/.*\.ts$/.test(value) && !value.endsWith(".d.ts") ? value.replace(/\.ts$/, ".js") : value;
    if (Array.isArray(value)) return value.map(toJs);
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, toJs(inner)]));
    }
    return value;
  };
  const manifest = JSON.parse(text) as Record<string, unknown>;
  for (const field of ["exports", "imports", "bin", "main"]) {
    if (field in manifest) manifest[field] = toJs(manifest[field]);
  }
  return JSON.stringify(manifest, null, 2);
}

/**
 * The package manager's links of `from` (a `node_modules`) copied as links into `to`: they are
 * relative, so a workspace package's name leads to the compiled copy and an installed package's
 * to the repository's own `node_modules`.
 */
function copyLinks(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    if (entry.name === ".bin") continue;
    const path = join(from, entry.name);
    if (entry.isSymbolicLink()) symlinkSync(readlinkSync(path), join(to, entry.name));
    else if (entry.isDirectory()) copyLinks(path, join(to, entry.name));
  }
}

/** Lays the repository out under `out`: sources compiled, manifests rewritten, every other file linked. */
function build(out: string, dirs: readonly string[], files: readonly string[]): void {
  mkdirSync(out, { recursive: true });
  symlinkSync(join(REPOSITORY, "node_modules"), join(out, "node_modules"));
  for (const name of readdirSync(REPOSITORY)) {
    if (lstatSync(join(REPOSITORY, name)).isFile()) symlinkSync(join(REPOSITORY, name), join(out, name));
  }
  for (const dir of dirs) {
    if (existsSync(join(REPOSITORY, dir, "node_modules"))) {
      copyLinks(join(REPOSITORY, dir, "node_modules"), join(out, dir, "node_modules"));
    }
  }
  const sources: string[] = [];
  for (const file of files) {
    mkdirSync(join(out, file, ".."), { recursive: true });
    if (file.endsWith(`${sep}package.json`)) {
      writeFileSync(join(out, file), compiledManifest(readFileSync(join(REPOSITORY, file), "utf8")));
    } else if (isSource(file)) sources.push(join(REPOSITORY, file));
    else symlinkSync(join(REPOSITORY, file), join(out, file));
  }
  esbuild().buildSync({
    entryPoints: sources,
    outdir: out,
    outbase: REPOSITORY,
    bundle: false,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "error",
  });
  writeFileSync(join(out, COMPLETE_MARKER), "");
}

/** Waits `ms` without an event loop (this runs inside the synchronous start of a child). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Removes copies of sources that have changed since (a day old), and builds abandoned midway. */
function removeOldCopies(current: string): void {
  for (const name of readdirSync(CACHE)) {
    const path = join(CACHE, name);
    if (path === current) continue;
    // Another process may remove it meanwhile (its own build, or the same sweep).
    const changedAt = lstatSync(path, { throwIfNoEntry: false })?.mtimeMs;
    if (changedAt === undefined) continue;
    if (Date.now() - changedAt > (name.startsWith(".") ? STALE_BUILD_MS : OLD_COPY_MS))
      rmSync(path, { recursive: true, force: true });
  }
}

/**
 * The compiled copy of the repository as its sources are now, built on first use: one process
 * builds (a lock folder beside the copy) while the others wait for it; a copy is complete only
 * once renamed into place.
 */
export function compiledSources(): string {
  const dirs = workspaceDirs();
  const files = dirs.flatMap((dir) => filesUnder(dir));
  const copy = join(CACHE, sourcesKey(files));
  const lock = join(CACHE, `.lock-${relative(CACHE, copy)}`);
  mkdirSync(CACHE, { recursive: true });
  for (;;) {
    if (existsSync(join(copy, COMPLETE_MARKER))) return copy;
    try {
      mkdirSync(lock);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      // Another process is building it; a lock it left when it died goes.
      const lockedAt = lstatSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
      if (Date.now() - lockedAt > STALE_BUILD_MS) rmSync(lock, { recursive: true, force: true });
      else sleepSync(100);
      continue;
    }
    try {
      if (existsSync(join(copy, COMPLETE_MARKER))) return copy;
      const building = join(CACHE, `.building-${randomUUID()}`);
      try {
        build(building, dirs, files);
        rmSync(copy, { recursive: true, force: true });
        renameSync(building, copy);
      } finally {
        rmSync(building, { recursive: true, force: true });
      }
      removeOldCopies(copy);
      return copy;
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

/**
 * The compiled copy of `script` (a `.ts` file of the repository), or undefined for a script
 * elsewhere (a test's temporary project), which runs through tsx.
 */
export function compiledScript(script: string): string | undefined {
  const path = relative(REPOSITORY, script);
  if (path.startsWith("..") || !isSource(path)) return undefined;
  return join(compiledSources(), path.replace(/\.ts$/, ".js"));
}

/**
 * The URL of the repository's source of a module a child loaded from its compiled copy (`.js` in
 * the copy → `.ts` in the repository), so that what a child reports reads as the sources; any
 * other URL as it is.
 */
export function sourceUrl(url: string): string {
  const copy = pathToFileURL(RUNNING_ROOT).href;
  if (RUNNING_ROOT === REPOSITORY || !url.startsWith(copy)) return url;
  return `${pathToFileURL(REPOSITORY).href}${url.slice(copy.length).replace(/\.js$/, ".ts")}`;
}
