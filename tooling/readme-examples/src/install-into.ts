/**
 * `pnpm install-into <project dir> <package…>` (from the repository root): Stowage as a user
 * installs it before it is published. Builds every package, packs each into a tarball (workspace
 * ranges rewritten, as `npm publish` would ship it), then `npm install`s into the project the
 * tarballs of the packages asked for and of every `@stowage/*` package they depend on: the same
 * files npm would download once they are released.
 */
import { mkdir, readFile } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { packTarballs } from "./pack-tarballs.ts";
import { type PublishedPackage, publishedPackages, REPOSITORY_ROOT } from "./published-packages.ts";
import { runCommand } from "./run-command.ts";

const INSTALL_TIMEOUT_MS = 600_000;

/** The asked packages and every `@stowage/*` package they depend on, transitively. */
async function withStowageDependencies(
  asked: readonly string[],
  packages: readonly PublishedPackage[],
): Promise<PublishedPackage[]> {
  const byName = new Map(packages.map((pkg) => [pkg.name, pkg]));
  const needed = new Map<string, PublishedPackage>();
  const queue = [...asked];
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (needed.has(name)) continue;
    const pkg = byName.get(name);
    if (!pkg)
      throw new Error(
        `${name} is not a package of this repository; one of: ${[...byName.keys()].join(", ")}`,
      );
    needed.set(name, pkg);
    const manifest = JSON.parse(await readFile(join(pkg.dir, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    queue.push(...Object.keys(manifest.dependencies ?? {}).filter((dep) => dep.startsWith("@stowage/")));
  }
  return [...needed.values()];
}

async function main(): Promise<number> {
  const [target, ...asked] = process.argv.slice(2);
  if (!target || asked.length === 0) {
    console.error(
      "usage: pnpm install-into <project dir> <package…>   e.g. pnpm install-into ../my-app @stowage/tenancy",
    );
    return 2;
  }
  // Relative to where the user ran pnpm, not to this package's directory.
  const project = isAbsolute(target) ? target : resolve(process.env.INIT_CWD ?? process.cwd(), target);
  const needed = await withStowageDependencies(asked, await publishedPackages());
  const build = await runCommand("npx", ["-y", "pnpm@10.34.9", "-s", "build"], {
    cwd: REPOSITORY_ROOT,
    timeoutMs: INSTALL_TIMEOUT_MS,
  });
  if (build.code !== 0) throw new Error(`pnpm build failed:\n${build.output}`);
  const destination = join(REPOSITORY_ROOT, "tarballs");
  await mkdir(destination, { recursive: true });
  const tarballs = await packTarballs(needed, destination);
  await mkdir(project, { recursive: true });
  // npm as the user runs it: none of the settings pnpm hands its scripts (`npm_config_*`).
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("npm_config_")),
  );
  const install = await runCommand("npm", ["install", ...tarballs.values()], {
    cwd: project,
    env,
    timeoutMs: INSTALL_TIMEOUT_MS,
  });
  process.stdout.write(install.output);
  if (install.code !== 0) return install.code ?? 1;
  console.log(`installed ${[...tarballs.keys()].join(", ")} into ${project} (tarballs in ${destination})`);
  return 0;
}

process.exitCode = await main();
