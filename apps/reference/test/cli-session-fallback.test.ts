import { chmod, mkdir, mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stowage as run, spawnStowage } from "./support/cli.js";
import { seedEmbeddedDatabase } from "./support/seed-embedded-database.js";

// `stowage session restore --fallback history`: when the stored session cannot be restored, the
// request's conversation history is printed for a new session's prompt, and stderr says why.
let dir: string;
let env: Record<string, string>;
let sessions = 0;

beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), "stowage-cli-fallback-")));
  env = { STOWAGE_DATA_DIR: join(dir, ".stowage") };
  await seedEmbeddedDatabase(env.STOWAGE_DATA_DIR!);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const stowage = (...argv: string[]) => run(argv, { cwd: dir, env });

/** An executable printing `version` for `--version`, as an installed agent CLI does. */
async function fakeCli(name: string, version: string): Promise<string> {
  const path = join(dir, "bin", name);
  await mkdir(join(dir, "bin"), { recursive: true });
  await writeFile(path, `#!${process.execPath}\nconsole.log(${JSON.stringify(version)});\n`);
  await chmod(path, 0o755);
  return path;
}

/** A Claude Code 2.1.5 session written by hand where Claude Code keeps it, captured for `request` of `user`. */
async function captureClaude(request: string, user: string, fact: string) {
  const sessionId = `7d2c1b0a-1111-4222-8333-44445555${String(sessions++).padStart(4, "0")}`;
  const cwd = join(dir, `work-${sessionId}`);
  const configDir = join(dir, `config-${sessionId}`);
  // Claude Code's project key: the real path with every character outside [a-zA-Z0-9] made `-`.
  const project = join(configDir, "projects", cwd.replace(/[^a-zA-Z0-9]/g, "-"));
  await mkdir(cwd, { recursive: true });
  await mkdir(project, { recursive: true });
  const common = { sessionId, cwd, version: "2.1.5", isSidechain: false };
  const lines = [
    {
      type: "user",
      uuid: "u1",
      parentUuid: null,
      ...common,
      message: { role: "user", content: `Remember: ${fact}` },
    },
    {
      type: "assistant",
      uuid: "a1",
      parentUuid: "u1",
      ...common,
      message: {
        role: "assistant",
        content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "echo noted" } }],
      },
    },
    {
      type: "user",
      uuid: "u2",
      parentUuid: "a1",
      ...common,
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "noted" }] },
    },
    {
      type: "assistant",
      uuid: "a2",
      parentUuid: "u2",
      ...common,
      message: { role: "assistant", content: [{ type: "text", text: `I will remember ${fact}.` }] },
    },
  ];
  await writeFile(
    join(project, `${sessionId}.jsonl`),
    `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`,
  );
  await stowage(
    ...["session", "capture", "--session", sessionId, "--cwd", cwd, "--config-dir", configDir],
    ...["--request", request, "--user", user, "--json"],
  );
  return { sessionId, cwd };
}

const restoreArgs = (request: string, user: string, into: string) => [
  ...["session", "restore", "--request", request, "--user", user],
  ...["--cwd", dir, "--config-dir", join(dir, into)],
];

describe("stowage session restore --fallback history", () => {
  it("a major version apart: nothing restored, the history printed, stderr says why", async () => {
    const { sessionId } = await captureClaude("req-v", "alice", "the launch code is ZEBRA-1187");
    const cli = await fakeCli("claude-3", "3.0.0 (Claude Code)");
    // Without --fallback the restore is refused as before.
    await expectStowageError(
      stowage(...restoreArgs("req-v", "alice", "into-v"), "--agent-cli", cli),
      "CONFLICT",
      "AGENT_VERSION_MISMATCH",
    );
    const { stdout, stderr } = await stowage(
      ...restoreArgs("req-v", "alice", "into-v"),
      ...["--agent-cli", cli, "--fallback", "history"],
    );
    expect(stdout).toBe(
      [
        "Earlier conversation (all 3 messages), oldest first:",
        "User:\nRemember: the launch code is ZEBRA-1187",
        "Assistant (tool): Bash → echo noted → noted (1 line)",
        "Assistant:\nI will remember the launch code is ZEBRA-1187.",
        "",
      ]
        .join("\n\n")
        .replace(/\n\n$/, "\n"),
    );
    const line = stderr.split("\n").find((each) => each.startsWith("fallback to history:"));
    expect(line).toMatch(
      new RegExp(
        `^fallback to history: restore of request req-v failed with CONFLICT AGENT_VERSION_MISMATCH; history of stored session ${sessionId} \\(claude-code\\): 3 of 3 messages, \\d+ tokens$`,
      ),
    );
    await expect(readdir(join(dir, "into-v"))).rejects.toMatchObject({ code: "ENOENT" });

    const json = JSON.parse(
      (
        await stowage(
          ...restoreArgs("req-v", "alice", "into-v"),
          ...["--agent-cli", cli, "--fallback", "history", "--max-messages", "1", "--json"],
        )
      ).stdout,
    );
    expect(json).toMatchObject({
      fallback: "history",
      requestId: "req-v",
      cause: { code: "CONFLICT", reason: "AGENT_VERSION_MISMATCH" },
      source: { kind: "stored-session", sessionId, agent: "claude-code" },
      messages: [{ role: "assistant", kind: "text", text: "I will remember the launch code is ZEBRA-1187." }],
      total: 3,
      omitted: 2,
      skipped: [],
    });
    expect(json.tokens).toBeGreaterThan(0);
  });

  it("a restorable session is restored as without --fallback", async () => {
    const { sessionId } = await captureClaude("req-ok", "alice", "nothing to fall back on");
    const cli = await fakeCli("claude-same", "2.1.5 (Claude Code)");
    const { stdout, stderr } = await stowage(
      ...restoreArgs("req-ok", "alice", "into-ok"),
      ...["--agent-cli", cli, "--fallback", "history", "--json"],
    );
    expect(JSON.parse(stdout)).toMatchObject({ sessionId, versionCheck: { verdict: "same" } });
    expect(stderr).not.toContain("fallback");
  });

  it("corrupt chunks: restore and history both fail; NOT_FOUND (NO_HISTORY) names what was tried", async () => {
    const { sessionId } = await captureClaude("req-c", "alice", "CORRUPT-FACT");
    // A capture is kept as chunks in the principal's blobs, files of the data directory: damage them all.
    const files: string[] = [];
    const walk = async (path: string): Promise<void> => {
      for (const entry of await readdir(path, { withFileTypes: true })) {
        const child = join(path, entry.name);
        if (entry.isDirectory()) await walk(child);
        else if (/^[0-9a-f]{64}$/.test(entry.name)) files.push(child);
      }
    };
    await walk(join(dir, ".stowage"));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const bytes = await readFile(file);
      bytes[0] = bytes[0]! ^ 0xff;
      await writeFile(file, bytes);
    }
    const err = await expectStowageError(
      stowage(...restoreArgs("req-c", "alice", "into-c"), "--fallback", "history"),
      "NOT_FOUND",
      "NO_HISTORY",
    );
    expect(err.message).toMatch(/^restore of request req-c failed \(INTEGRITY/);
    expect(err.message).toContain(`${sessionId}: INTEGRITY`);
    expect(err.message).not.toContain("CORRUPT-FACT");
  });

  it("nothing stored, or another principal's request: NOT_FOUND, never its content", async () => {
    const none = await expectStowageError(
      stowage(...restoreArgs("req-none", "alice", "into-none"), "--fallback", "history"),
      "NOT_FOUND",
      "NO_HISTORY",
    );
    expect(none.message).toContain("no live stored session of request req-none");
    await captureClaude("req-alice", "alice", "ALICE-ONLY-7");
    const other = await expectStowageError(
      stowage(...restoreArgs("req-alice", "bob", "into-bob"), "--fallback", "history", "--json"),
      "NOT_FOUND",
      "NO_HISTORY",
    );
    expect(JSON.stringify({ message: other.message, details: other.details })).not.toContain("ALICE-ONLY-7");
  });

  it("--job: with no stored session, the job's thread gives the history; another principal's job gives none", async () => {
    // Posted as a worker posts to a job thread: into the data directory's shared store, in dave's namespace.
    const { loadStorageConfig } = await import("../src/config.js");
    const { openSessionStores } = await import("../src/cli/shared-stores.js");
    const { plainPostItem, textItem } = await import("@stowage/thread-items");
    const stores = await openSessionStores(loadStorageConfig(env, dir));
    try {
      const threads = stores.tenant({ kind: "user", id: "dave" }).threads;
      await threads.post({ jobId: "job-9", alias: "main" }, plainPostItem("Ship it with the tag JOB-TAG-9"));
      await threads.post({ jobId: "job-9", alias: "main" }, textItem("Shipped with JOB-TAG-9."));
    } finally {
      await stores.close();
    }
    const { stdout, stderr } = await stowage(
      ...restoreArgs("req-job", "dave", "into-job"),
      ...["--fallback", "history", "--job", "job-9"],
    );
    expect(stdout).toContain("User:\nShip it with the tag JOB-TAG-9");
    expect(stdout).toContain("Assistant:\nShipped with JOB-TAG-9.");
    expect(stderr).toMatch(
      /^fallback to history: restore of request req-job failed with NOT_FOUND; history of job thread job-9\/main: 2 of 2 messages, \d+ tokens$/m,
    );
    const other = await expectStowageError(
      stowage(...restoreArgs("req-job", "erin", "into-erin"), "--fallback", "history", "--job", "job-9"),
      "NOT_FOUND",
      "NO_HISTORY",
    );
    expect(other.message).not.toContain("JOB-TAG-9");
  });

  it("exit codes: 0 with a history, 1 without one, 2 for a wrong command line", async () => {
    const cli = await fakeCli("claude-4", "4.0.0 (Claude Code)");
    await captureClaude("req-exit", "carol", "EXIT-FACT");
    const spawn = (...argv: string[]) => spawnStowage(argv, { cwd: dir, env });
    const ok = await spawn(
      ...restoreArgs("req-exit", "carol", "into-exit"),
      "--agent-cli",
      cli,
      "--fallback",
      "history",
    );
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toContain("EXIT-FACT");
    const none = await spawn(...restoreArgs("req-nothing", "carol", "into-n"), "--fallback", "history");
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("no conversation history");
    for (const wrong of [
      ["--fallback", "summary"],
      ["--fallback", "history", "--max-messages", "0"],
      ["--fallback", "history", "--budget-tokens", "many"],
      ["--max-messages", "5"],
      ["--job", "job-1"],
    ]) {
      const run = await spawn(...restoreArgs("req-exit", "carol", "into-w"), ...wrong);
      expect(run.code, `${wrong.join(" ")}: ${run.stderr}`).toBe(2);
    }
    expect((await stat(join(dir, "into-exit")).catch(() => undefined))?.isDirectory()).not.toBe(true);
  });
});
