import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { PublishedPackage } from "./published-packages.ts";
import { runCommand } from "./run-command.ts";

/** pnpm as this process was started by it, else the pinned version through npx. */
function pnpm(): { command: string; prefix: string[] } {
  const execPath = process.env.npm_execpath;
  if (execPath?.includes("pnpm")) return { command: process.execPath, prefix: [execPath] };
  return { command: "npx", prefix: ["-y", "pnpm@10.34.9"] };
}

/**
 * `pnpm pack` of every package into `destination` (their `dist/` must be built): the tarballs a
 * user would download, workspace ranges rewritten and the manifest shaped by `.pnpmfile.cjs`.
 * Returns tarball paths by package name.
 */
export async function packTarballs(
  packages: readonly PublishedPackage[],
  destination: string,
): Promise<Map<string, string>> {
  const { command, prefix } = pnpm();
  const tarballs = new Map<string, string>();
  for (const pkg of packages) {
    const before = new Set(await readdir(destination));
    const result = await runCommand(command, [...prefix, "pack", "--pack-destination", destination], {
      cwd: pkg.dir,
      timeoutMs: 120_000,
    });
    const created = (await readdir(destination)).filter((file) => !before.has(file) && file.endsWith(".tgz"));
    if (result.code !== 0 || created.length !== 1) {
      throw new Error(`pnpm pack of ${pkg.name} failed (exit ${result.code}):\n${result.output}`);
    }
    tarballs.set(pkg.name, join(destination, created[0] as string));
  }
  return tarballs;
}
