import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** One entry point of a published package, as its `exports` map names it. */
export interface PackageEntry {
  /** `.`, `./testing`, `./backend`… */
  subpath: string;
  /** The TypeScript source the `@stowage/source` condition points at (absolute). */
  source: string;
}

/** A package published to npm, with its entry points. */
export interface PublishedPackage {
  name: string;
  /** Its directory (absolute). */
  dir: string;
  entries: PackageEntry[];
}

interface PackageJson {
  name: string;
  private?: boolean;
  exports?: Record<string, string | Record<string, string>>;
}

/** Where the workspace keeps packages that may be published. */
const PACKAGE_PARENTS = ["packages", "apps"];

/** Every package of the workspace that is published (not `private`), with its source entries. */
export function publishedPackages(root: string): PublishedPackage[] {
  const found: PublishedPackage[] = [];
  for (const parent of PACKAGE_PARENTS) {
    for (const name of readdirSync(join(root, parent)).sort()) {
      const dir = join(root, parent, name);
      let manifest: PackageJson;
      try {
        manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as PackageJson;
      } catch {
        continue;
      }
      if (manifest.private) continue;
      const entries: PackageEntry[] = [];
      for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
        const source = typeof target === "object" ? target["@stowage/source"] : undefined;
        if (source) entries.push({ subpath, source: join(dir, source) });
      }
      found.push({ name: manifest.name, dir, entries });
    }
  }
  return found;
}
