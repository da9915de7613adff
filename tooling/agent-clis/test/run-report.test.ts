import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { runAgentCli } from "../src/agent-run.js";
import { type AgentCli, createAgentContainer } from "../src/index.js";

const root = await tempDirectory("stowage-run-report-");

/** A stand-in "CLI": `sh -c <script>`, so a run's ending is chosen by the test. */
function shellCli(script: string): AgentCli {
  return { ready: true, name: "opencode", version: "0", dir: root, command: "/bin/sh", args: ["-c", script] };
}

async function run(name: string, script: string, timeoutMs = 10_000) {
  const { home, cwd } = await createAgentContainer(root, name);
  const result = await runAgentCli(
    { cli: shellCli(script), baseUrl: "http://127.0.0.1:9", home, cwd, prompt: "", timeoutMs },
    [],
    {},
    () => undefined,
  );
  return { home, result };
}

describe("the report of an agent run", () => {
  it("is one line for a run that exited 0", async () => {
    const { result } = await run("ok", "echo fine; echo noise >&2");
    expect(result.code).toBe(0);
    expect(result.report).toMatch(/^opencode exited with 0 after \d+ ms$/);
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("quotes stderr, stdout and the newest log under HOME for a failed run", async () => {
    const script = [
      'mkdir -p "$HOME/.local/share/opencode/log" "$HOME/node_modules/pkg"',
      'echo "old line" > "$HOME/.local/share/opencode/log/old.log"',
      'echo "ignored" > "$HOME/node_modules/pkg/install.log"',
      "sleep 0.05",
      'echo "database is locked" > "$HOME/.local/share/opencode/log/new.log"',
      "echo partial-event; echo boom >&2; exit 3",
    ].join("\n");
    const { result } = await run("failed", script);
    expect(result.code).toBe(3);
    expect(result.report).toContain("opencode exited with 3 after");
    expect(result.report).toContain("--- stderr:\nboom");
    expect(result.report).toContain("--- stdout:\npartial-event");
    expect(result.report).toContain("--- log .local/share/opencode/log/new.log:\ndatabase is locked");
    expect(result.report).not.toContain("ignored");
    expect(result.report.indexOf("new.log")).toBeLessThan(result.report.indexOf("old.log"));
  });

  it("says a silent run timed out, and keeps only the tail of a long stream", async () => {
    const script = "head -c 20000 /dev/zero | tr '\\0' x >&2; echo >&2; echo LAST >&2; sleep 30";
    const { result } = await run("hung", script, 1_000);
    expect(result.timedOut).toBe(true);
    expect(result.code).toBeNull();
    expect(result.report).toMatch(/^opencode timed out after \d+ ms and was killed/);
    expect(result.report).toContain("LAST");
    expect(result.report.length).toBeLessThan(5_000);
    expect(result.report).toContain("--- stdout: (empty)");
  });

  it("ends a run whose CLI exited while a helper it started still holds the output pipes", async () => {
    // The helper inherits stdout and outlives the CLI: without the kill after exit, `close` would
    // wait for it until the run's timeout.
    const { result } = await run("helper", "sleep 60 & echo done; exit 0", 30_000);
    expect(result.code, result.report).toBe(0);
    expect(result.timedOut).toBe(false);
    expect(result.stdout.trim()).toBe("done");
  });

  it("runs the CLI with a temp directory of its own inside HOME", async () => {
    const { home, result } = await run("tmp", 'echo "$TMPDIR"; test -d "$TMPDIR"');
    expect(result.code, result.report).toBe(0);
    expect(result.stdout.trim()).toBe(join(home, "tmp"));
    expect(existsSync(join(home, "tmp"))).toBe(true);
  });

  it("does not follow a symlinked log out of HOME", async () => {
    const outside = join(root, "secret.log");
    await writeFile(outside, "SECRET\n");
    const { result } = await run("symlink", `ln -s "${outside}" "$HOME/planted.log"; exit 1`);
    expect(result.code).toBe(1);
    expect(result.report).not.toContain("SECRET");
    expect(result.report).not.toContain("planted.log");
  });
});
