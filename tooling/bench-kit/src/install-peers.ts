import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

export interface InstalledPeers {
  /** Exact versions installed, by package name: print them with the figures. */
  versions: Record<string, string>;
  /** Where they are (a directory with its own node_modules). */
  directory: string;
  /** `import()` of a specifier resolved from that directory: `load("unstorage/drivers/fs")`. */
  load<T = unknown>(specifier: string): Promise<T>;
  /** One line for the bench's output: `peers installed at bench time: a@1.2.3, b@4.5.6`. */
  describe(): string;
}

const IMPORTER = "export const load = (specifier) => import(specifier);\n";

function npmInstall(directory: string): void {
  execFileSync("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"], {
    cwd: directory,
    stdio: ["ignore", "ignore", "inherit"],
  });
}

/**
 * Installs the peer libraries a bench compares with, as a user would get them today (`npm install`
 * of the given ranges into a directory of their own, outside the workspace: no lockfile of ours
 * pins them, no workspace hoisting shares their dependencies), once per bench process. Kept in
 * `~/.cache/stowage-bench-peers/`; when npm cannot reach its registry, the last installation of
 * the same ranges is used and said so.
 */
export async function installPeers(ranges: Record<string, string>): Promise<InstalledPeers> {
  const digest = createHash("sha256").update(JSON.stringify(ranges)).digest("hex").slice(0, 16);
  const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "stowage-bench-peers");
  const directory = join(cache, digest);
  const staging = `${directory}.installing-${process.pid}`;
  let stale = false;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  await writeFile(
    join(staging, "package.json"),
    JSON.stringify({ private: true, type: "module", dependencies: ranges }),
  );
  await writeFile(join(staging, "import.mjs"), IMPORTER);
  try {
    npmInstall(staging);
    await rm(directory, { recursive: true, force: true });
    await rename(staging, directory);
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    if (!existsSync(join(directory, "node_modules"))) throw err;
    stale = true;
  }
  const versions = Object.fromEntries(
    Object.keys(ranges).map((name) => {
      const manifest = JSON.parse(
        readFileSync(join(directory, "node_modules", name, "package.json"), "utf8"),
      );
      return [name, manifest.version as string];
    }),
  );
  const importer = (await import(pathToFileURL(join(directory, "import.mjs")).href)) as {
    load(specifier: string): Promise<unknown>;
  };
  return {
    versions,
    directory,
    load: async <T>(specifier: string) => (await importer.load(specifier)) as T,
    describe: () =>
      `peers installed at bench time${stale ? " (npm failed: the last installation)" : ""}: ${Object.entries(
        versions,
      )
        .map(([name, version]) => `${name}@${version}`)
        .join(", ")}`,
  };
}
