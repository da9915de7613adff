// What a backend's root entry loads, and what a user must install to import it. A backend
// implements core's contracts; the domain integrations (`@stowage/storage-postgres/sessions`,
// `/uploads`, `/metrics`) are opt-in entries, so the roots load neither zod nor the tokenizer,
// and only storage-s3 loads the AWS SDK.
import { realpath, symlink } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { installedPackages, isolatedSources, runChild } from "@stowage/test-support";
import { describe, expect, inject, it } from "vitest";
import type {} from "./support/embedded-database-template.js";

const CHILD = new URL("./children/backend-modules.ts", import.meta.url);
/** What no backend's root may load: the schema library and the tokenizer (28 MB with zod). */
const DOMAIN_ONLY = ["zod", "gpt-tokenizer"];
/** Stowage's domain packages, whose sources a backend's root must not reach. */
const DOMAIN_SOURCES =
  /\/packages\/(sessions|uploads|hot-state|thread-items|artifacts|blob-store|tenancy|mcp)\//;

/** The module URLs the child resolved loading (and, where it can, using) one entry. */
async function modulesOf(what: string): Promise<string[]> {
  const result = await runChild(CHILD, [what, inject("embeddedDatabaseDump")]);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as string[];
}

describe("each backend's root entry", () => {
  it.each([
    ["@stowage/storage-postgres (connected, object store and notifier used)", "postgres", "drizzle-orm"],
    ["@stowage/storage-fs (object store used)", "fs", undefined],
  ])(
    "%s loads no zod, gpt-tokenizer, @aws-sdk/* or domain package",
    async (_name, what, expected) => {
      const urls = await modulesOf(what);
      const packages = installedPackages(urls);
      for (const name of DOMAIN_ONLY) expect(packages).not.toContain(name);
      expect(packages.filter((name) => name.startsWith("@aws-sdk/"))).toEqual([]);
      expect(urls.filter((url) => DOMAIN_SOURCES.test(url))).toEqual([]);
      // The walk saw the graph: core's sources and the backend's own dependency are there.
      expect(urls.some((url) => /\/packages\/core\/src\//.test(url))).toBe(true);
      if (expected) expect(packages).toContain(expected);
    },
    60_000,
  );

  it("@stowage/storage-s3 loads the AWS SDK (its job) and no zod, gpt-tokenizer or domain package", async () => {
    const urls = await modulesOf("s3");
    const packages = installedPackages(urls);
    expect(packages).toContain("@aws-sdk/client-s3");
    for (const name of DOMAIN_ONLY) expect(packages).not.toContain(name);
    expect(urls.filter((url) => DOMAIN_SOURCES.test(url))).toEqual([]);
  }, 60_000);

  it("the control: @stowage/storage-postgres/metrics loads hot-state and zod (the check can see them)", async () => {
    const urls = await modulesOf("postgres-metrics");
    expect(installedPackages(urls)).toContain("zod");
    expect(urls.some((url) => /\/packages\/hot-state\/src\//.test(url))).toBe(true);
  }, 60_000);
});

const PACKAGE_DIR = fileURLToPath(new URL("..", import.meta.url));

/**
 * Links a third-party package this package has installed into a project's node_modules, as npm
 * would have put it there (its own dependencies resolve beside its real directory).
 */
async function install(projectDir: string, name: string): Promise<void> {
  const installed = await realpath(join(PACKAGE_DIR, "node_modules", name));
  await symlink(installed, join(projectDir, "node_modules", name), "dir");
}

describe("a user who installs only @stowage/storage-postgres and its driver peers", () => {
  it("imports the root and /env without @stowage/sessions, uploads or hot-state installed", async () => {
    const project = await isolatedSources(["core", "storage-postgres"]);
    for (const name of ["dataloader", "drizzle-orm", "pg", "proper-lockfile"])
      await install(project.dir, name);
    expect(await project.importEntry("@stowage/storage-postgres")).toEqual({});
    expect(await project.importEntry("@stowage/storage-postgres/env")).toEqual({});
    // The control: an opt-in entry needs its domain package, and says which is missing.
    const sessions = await project.importEntry("@stowage/storage-postgres/sessions");
    expect(sessions.code).toBe("ERR_MODULE_NOT_FOUND");
    expect(sessions.message).toContain("@stowage/sessions");
  }, 60_000);
});
