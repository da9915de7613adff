import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { publishedPackages, REPOSITORY_ROOT } from "../src/published-packages.ts";

// What an npm user expects of every published package: the license text in the tarball, a
// changelog, and the links and keywords npm shows. (Scripts and devDependencies are stripped at
// pack time by .pnpmfile.cjs; the README check installs the packed tarballs.)
const packages = await publishedPackages();
const license = await readFile(join(REPOSITORY_ROOT, "LICENSE"), "utf8");

describe("published manifests", () => {
  it("the repository's LICENSE is MIT, held by Stowage contributors", () => {
    expect(license).toMatch(/^MIT License\n\nCopyright \(c\) 2026 Stowage contributors\n/);
  });

  it.each(packages.map((pkg) => [pkg.name, pkg] as const))(
    "%s ships LICENSE and CHANGELOG.md, with links and keywords",
    async (_name, pkg) => {
      const manifest = JSON.parse(await readFile(join(pkg.dir, "package.json"), "utf8"));
      expect(manifest.license).toBe("MIT");
      expect(await readFile(join(pkg.dir, "LICENSE"), "utf8")).toBe(license);
      expect(await readFile(join(pkg.dir, "CHANGELOG.md"), "utf8")).toMatch(
        new RegExp(`^# ${manifest.name}\\n`),
      );
      expect(manifest.files).toEqual(expect.arrayContaining(["LICENSE", "CHANGELOG.md"]));
      expect(manifest.repository).toMatchObject({
        type: "git",
        url: expect.stringMatching(/^git\+https:\/\//),
      });
      expect(manifest.homepage).toMatch(/^https:\/\/github\.com\/.+#readme$/);
      expect(manifest.bugs?.url).toMatch(/^https:\/\/github\.com\/.+\/issues$/);
      expect(manifest.keywords?.length).toBeGreaterThan(0);
    },
  );
});
