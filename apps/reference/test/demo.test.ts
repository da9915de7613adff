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
    const { stdout, stderr } = await run(
      process.execPath,
      ["--import", "tsx", "--conditions=@stowage/source", "src/bin.ts", "demo", "--exit"],
      {
        cwd: appDir,
        env: { ...embeddedEnv(), STOWAGE_DATA_DIR: dataDir, STOWAGE_PORT: "0" },
        timeout: 120_000,
      },
    );
    // The demo narrates on stderr, as `serve` does; stdout carries data only, and it returns none.
    expect(stdout).toBe("");
    expect(stderr).toContain("database: embedded PGlite");
    expect(stderr).toContain("uploads: signed URLs served by this app");
    for (let step = 1; step <= 11; step++) expect(stderr).toMatch(new RegExp(`^${step}\\. `, "m"));
    expect(stderr).toMatch(/captured the container's claude-code session/);
    expect(stderr).toMatch(
      /captured a reviewer container's codex session .* \(its rollout \d{4}\/\d{2}\/\d{2}\/rollout-/,
    );
    expect(stderr).toContain("byte for byte identical");
    expect(stderr).toMatch(/measured 6 model calls: .* turn 4 over the prompt budget/);
    expect(stderr).toContain("demo finished: every step above was checked.");
    expect(stderr).toMatch(/viewer: http:\/\/127\.0\.0\.1:\d+\/#key=stw_[^&]+&session=[0-9a-f-]{36}/);
  }, 150_000);
});
