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
    // The server is gone when --exit returns: no URL to open, but how to serve the run again.
    expect(stderr).not.toMatch(/viewer: |https?:\/\/[^\s]*#key=/);
    expect(stderr).toMatch(/^API key of user demo: stw_/m);
    expect(stderr).toContain("server stopped (--exit)");
    // The budget violation is part of the script, and says so before the server's warnings.
    const label = stderr.indexOf("part of the script: model call 4");
    expect(label).toBeGreaterThan(0);
    expect(stderr.indexOf("context budget violated")).toBeGreaterThan(label);
  }, 150_000);
});
