import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stowage as run } from "./support/cli.js";
import { seedEmbeddedDatabase } from "./support/seed-embedded-database.js";

// `stowage session restore` runs the installed agent CLI's `--version` and compares it with the
// version the captured session records; stand-in CLIs print what the real ones do.
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "stowage-cli-agent-version-"));
  env = { STOWAGE_DATA_DIR: join(dir, ".stowage") };
  await seedEmbeddedDatabase(env.STOWAGE_DATA_DIR!);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function stowage(...argv: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(argv, { cwd: dir, env });
}

/** An executable at `<dir>/bin/<name>` that runs `body` (JavaScript) with node. */
async function fakeCli(name: string, body: string): Promise<string> {
  const path = join(dir, "bin", name);
  await mkdir(join(dir, "bin"), { recursive: true });
  await writeFile(path, `#!${process.execPath}\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

const codexId = "019e1625-789d-76c0-80ab-3724b5ddb799";

/** Captures a Codex rollout written by `cliVersion` for `request`. */
async function captureRollout(request: string, cliVersion: string): Promise<Record<string, unknown>> {
  const codexHome = join(dir, `codex-${request}`);
  const day = join(codexHome, "sessions", "2026", "11", "23");
  await mkdir(day, { recursive: true });
  await writeFile(
    join(day, `rollout-2026-11-23T04-00-00-${codexId}.jsonl`),
    `${JSON.stringify({ timestamp: "2026-11-23T04:00:00.000Z", type: "session_meta", payload: { id: codexId, cli_version: cliVersion } })}\n`,
  );
  const captured = await stowage(
    ...["session", "capture", "--agent", "codex", "--codex-home", codexHome, "--session", codexId],
    ...["--request", request, "--user", "cli", "--json"],
  );
  return JSON.parse(captured.stdout) as Record<string, unknown>;
}

const restoreArgs = (request: string, cli: string) => [
  ...["session", "restore", "--codex-home", join(dir, `restored-${request}`), "--request", request],
  ...["--user", "cli", "--agent-cli", cli, "--json"],
];

describe("stowage session capture|restore: the agent version", () => {
  it("records the version at capture; the same installed version restores silently", async () => {
    expect(await captureRollout("same", "0.169.0")).toMatchObject({ agentVersion: "0.169.0" });
    const cli = await fakeCli("codex-same", 'console.log("codex-cli 0.169.0")');
    const restored = await stowage(...restoreArgs("same", cli));
    expect(JSON.parse(restored.stdout)).toMatchObject({
      agentVersion: "0.169.0",
      versionCheck: { verdict: "same", version: "0.169.0" },
    });
    expect(restored.stderr).not.toContain("warning");
  });

  it("a different version not known to be incompatible restores with a warning on stderr", async () => {
    await captureRollout("older", "0.125.0");
    const cli = await fakeCli("codex-newer", 'console.log("codex-cli 0.169.0")');
    const restored = await stowage(...restoreArgs("older", cli));
    expect(JSON.parse(restored.stdout)).toMatchObject({ versionCheck: { verdict: "differs" } });
    expect(restored.stderr).toMatch(
      /warning: the codex session was captured with version 0\.125\.0, the installed CLI is 0\.169\.0/,
    );
  });

  it("a major version apart is refused with CONFLICT (AGENT_VERSION_MISMATCH), nothing restored", async () => {
    await captureRollout("major", "0.169.0");
    const cli = await fakeCli("codex-one", 'console.log("codex-cli 1.0.0")');
    const err = await expectStowageError(
      stowage(...restoreArgs("major", cli)),
      "CONFLICT",
      "AGENT_VERSION_MISMATCH",
    );
    expect(err.details).toEqual({ agent: "codex", captured: "0.169.0", installed: "1.0.0" });
    await expect(readdir(join(dir, "restored-major"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("a CLI that fails, prints no version or is missing: restored unchecked, said on stderr", async () => {
    await captureRollout("unchecked", "0.169.0");
    const failing = await fakeCli("codex-fails", "process.exit(3)");
    const garbage = await fakeCli("codex-garbage", 'process.stdout.write("\\u001b[2J" + "x".repeat(200000))');
    for (const [cli, said] of [
      [failing, "--version failed"],
      [garbage, "--version printed more than"],
      [join(dir, "bin", "absent"), "--version failed"],
    ] as const) {
      const restored = await stowage(...restoreArgs("unchecked", cli));
      expect(JSON.parse(restored.stdout)).toMatchObject({ versionCheck: { verdict: "unknown" } });
      expect(restored.stderr).toContain(`agent version not checked: ${cli} ${said}`);
    }
    // No --agent-cli and no codex on PATH (this environment has no PATH).
    const restored = await stowage(
      ...["session", "restore", "--codex-home", join(dir, "restored-nopath"), "--request", "unchecked"],
      ...["--user", "cli", "--json"],
    );
    expect(restored.stderr).toContain("agent version not checked: no codex on PATH");
  });
});
