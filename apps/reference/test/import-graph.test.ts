import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { installedPackages, runChild } from "@stowage/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { seedEmbeddedDatabase } from "./support/seed-embedded-database.js";

const child = new URL("./children/app-modules.ts", import.meta.url);
const dataDirs: string[] = [];
afterAll(() => Promise.all(dataDirs.map((dir) => rm(dir, { recursive: true, force: true }))));

/** The installed packages the app loads to build its services, the HTTP app and the CLI. */
async function packagesLoadedWith(env: Record<string, string>): Promise<string[]> {
  const dataDir = await mkdtemp(join(tmpdir(), "stowage-graph-"));
  dataDirs.push(dataDir);
  // The run's migrated embedded database (no initdb): what the app loads to run is the question.
  await seedEmbeddedDatabase(dataDir);
  // Embedded defaults: no S3 and no PostgreSQL from the environment CI runs in.
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("S3_") && !name.startsWith("DATABASE_")),
  );
  const result = await runChild(child, [dataDir], { env: { ...clean, ...env } as NodeJS.ProcessEnv });
  expect(result.code, result.stderr).toBe(0);
  return installedPackages(JSON.parse(result.stdout) as string[]);
}

describe("the app's import graph", () => {
  it("with no S3 configured loads no @aws-sdk/* (an fs-only deployment never loads the AWS SDK)", async () => {
    const loaded = await packagesLoadedWith({});
    // The check sees what is really loaded: the fs app's own dependencies are there.
    expect(loaded).toContain("hono");
    expect(loaded).toContain("@electric-sql/pglite");
    expect(loaded.filter((name) => name.startsWith("@aws-sdk/"))).toEqual([]);
  });

  it("with S3 configured loads the AWS SDK (the control: the check can see it)", async () => {
    const loaded = await packagesLoadedWith({
      S3_ENDPOINT: "http://127.0.0.1:1",
      S3_BUCKET: "graph-control",
      S3_ACCESS_KEY_ID: "id",
      S3_SECRET_ACCESS_KEY: "secret",
    });
    expect(loaded).toContain("@aws-sdk/client-s3");
  });
});
