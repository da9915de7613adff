import type { PublishedPackage } from "./published-packages.ts";
import type { ReadmeScan } from "./scan-readme.ts";

/**
 * Install lines that leave a peer dependency of a published package unpinned. A bare
 * `npm install drizzle-orm` takes whatever is newest, which a narrow peer range
 * (`^0.45.0`, `>=0.3.330 <0.4.0`) refuses the day a new minor ships: the README must give a range.
 */
export function unpinnedPeers(scan: ReadmeScan, packages: readonly PublishedPackage[]): string[] {
  const problems: string[] = [];
  for (const name of scan.installs) {
    if (name.startsWith("@stowage/") || scan.versions[name] !== undefined) continue;
    const peerOf = packages.find((pkg) => pkg.peerDependencies[name] !== undefined);
    if (peerOf) {
      problems.push(
        `installs ${name} without a version, but ${peerOf.name} takes it as a peer at ${peerOf.peerDependencies[name]}: pin it`,
      );
    }
  }
  return problems;
}
