import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { unpinnedPeers } from "../src/peer-pins.ts";
import { publishedPackages } from "../src/published-packages.ts";
import { scanReadme } from "../src/scan-readme.ts";

// The static half of `pnpm --filter @stowage/readme-examples check`, fast enough for every test
// run: every ts block of a published package's README is tagged, and installs what it imports.
// The check itself (pack, npm install, tsc, node) runs in CI (.ci/run).
const packages = await publishedPackages();

describe("published READMEs", () => {
  it.each(packages.map((pkg) => [pkg.name, pkg] as const))(
    "%s: every ts example is tagged and installable, every peer pinned",
    async (_name, pkg) => {
      const readme = await readFile(pkg.readme, "utf8").catch(() => "");
      expect(readme, "a README.md").not.toBe("");
      const scan = scanReadme(readme);
      expect(scan.problems).toEqual([]);
      expect(unpinnedPeers(scan, packages)).toEqual([]);
      if (scan.examples.length > 0) expect(scan.installs).toContain(pkg.name);
    },
  );
});
