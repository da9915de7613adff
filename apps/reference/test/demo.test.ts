import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const run = promisify(execFile);

/** This environment without the variables that select real servers: the demo runs on embedded defaults. */
function embeddedEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("S3_") && name !== "DATABASE_URL"),
  );
}
const appDir = fileURLToPath(new URL("..", import.meta.url));
let dataDir: string;
afterAll(() => rm(dataDir, { recursive: true, force: true }));

describe("stowage demo", () => {
  it("runs to completion on embedded defaults, as README command 1 does", async () => {
    dataDir = await mkdtemp(join(tmpdir(), "stowage-demo-"));
    const { stdout } = await run(
      process.execPath,
      ["--import", "tsx", "--conditions=@stowage/source", "src/bin.ts", "demo", "--exit"],
      {
        cwd: appDir,
        env: { ...embeddedEnv(), STOWAGE_DATA_DIR: dataDir, STOWAGE_PORT: "0" },
        timeout: 120_000,
      },
    );
    expect(stdout).toContain("database: embedded PGlite");
    expect(stdout).toContain("artifact uploads: signed URLs served by this app");
    for (let step = 1; step <= 9; step++) expect(stdout).toMatch(new RegExp(`^${step}\\. `, "m"));
    expect(stdout).toContain("byte for byte identical");
    expect(stdout).toContain("demo finished: every step above was checked.");
    expect(stdout).toMatch(/viewer: http:\/\/127\.0\.0\.1:\d+\/#key=stw_[^&]+&session=[0-9a-f-]{36}/);
  }, 150_000);
});
