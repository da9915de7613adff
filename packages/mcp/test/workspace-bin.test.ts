import { execFile, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const run = promisify(execFile);

interface Manifest {
  name: string;
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  publishConfig?: { bin?: Record<string, string> };
}

/** Files a fresh clone has: what git does not ignore (dist/ and node_modules/ are ignored). */
const tracked = new Set(
  execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], {
    cwd: root,
    encoding: "utf8",
  }).split("\n"),
);
const manifests = [...tracked]
  .filter((path) => /^(packages|apps|tooling)\/[^/]+\/package\.json$/.test(path))
  .map((path) => ({
    dir: path.slice(0, -"/package.json".length),
    manifest: JSON.parse(readFileSync(join(root, path), "utf8")) as Manifest,
  }));
/** Names some workspace package depends on: pnpm links their bins into that package at install. */
const dependedOn = new Set(
  manifests.flatMap(({ manifest }) => Object.keys({ ...manifest.dependencies, ...manifest.devDependencies })),
);

describe("bins a workspace install links", () => {
  const linked = manifests.filter(({ manifest }) => manifest.bin && dependedOn.has(manifest.name));

  it("include stowage-mcp", () => {
    expect(linked.map(({ manifest }) => manifest.name)).toContain("@stowage/mcp");
  });

  // A bin target that only a build creates makes `pnpm install` on a fresh clone warn
  // "Failed to create bin … ENOENT".
  it.each(linked.map(({ dir, manifest }) => [manifest.name, dir, manifest] as const))(
    "%s: every bin target is a committed file, and the published bin runs from dist/",
    (_name, dir, manifest) => {
      for (const [bin, target] of Object.entries(manifest.bin ?? {})) {
        expect(tracked, `${bin} → ${target}`).toContain(join(dir, target));
        expect(manifest.publishConfig?.bin?.[bin], bin).toMatch(/^\.\/dist\//);
      }
    },
  );
});

describe("the workspace stowage-mcp bin", () => {
  it("runs with or without a build of dist/", async () => {
    const bin = fileURLToPath(new URL("../bin/stowage-mcp.js", import.meta.url));
    const manifest = JSON.parse(readFileSync(join(root, "packages/mcp/package.json"), "utf8")) as {
      version: string;
    };
    const { stdout } = await run(process.execPath, [bin, "--version"], { timeout: 60_000 });
    expect(stdout.trim()).toBe(manifest.version);
  }, 90_000);
});
