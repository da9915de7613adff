import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

/** A workspace package that is published to npm. */
export interface PublishedPackage {
  name: string;
  dir: string;
  readme: string;
  /** Its peer dependencies and their ranges (what a README's install line must pin). */
  peerDependencies: Readonly<Record<string, string>>;
}

/** The repository's root, found from this file. */
export const REPOSITORY_ROOT = new URL("../../../", import.meta.url).pathname;

/** Every non-private package under `packages/` and `apps/`, by directory name. */
export async function publishedPackages(root = REPOSITORY_ROOT): Promise<PublishedPackage[]> {
  const packages: PublishedPackage[] = [];
  for (const group of ["packages", "apps"]) packages.push(...(await publishedIn(root, group)));
  return packages;
}

async function publishedIn(root: string, group: string): Promise<PublishedPackage[]> {
  const packages: PublishedPackage[] = [];
  const entries = await readdir(join(root, group), { withFileTypes: true });
  for (const entry of entries.filter((e) => e.isDirectory()).sort((a, b) => a.name.localeCompare(b.name))) {
    const dir = join(root, group, entry.name);
    const manifest = await readFile(join(dir, "package.json"), "utf8").catch(() => undefined);
    if (manifest === undefined) continue;
    const {
      name,
      private: isPrivate,
      peerDependencies = {},
    } = JSON.parse(manifest) as {
      name: string;
      private?: boolean;
      peerDependencies?: Record<string, string>;
    };
    if (!isPrivate) packages.push({ name, dir, readme: join(dir, "README.md"), peerDependencies });
  }
  return packages;
}
