import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { CommanderError } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// The stand-in lives with the package whose OpenCode contract it is.
import { fakeOpencodeDatabase, writeFakeOpencode } from "../../../packages/sessions/test/fake-opencode.js";
import { stowage as run } from "./support/cli.js";
import { seedEmbeddedDatabase } from "./support/seed-embedded-database.js";

let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "stowage-cli-agents-"));
  env = { STOWAGE_DATA_DIR: join(dir, ".stowage") };
  await seedEmbeddedDatabase(env.STOWAGE_DATA_DIR!);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function stowage(...argv: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(argv, { cwd: dir, env });
}

const codexId = "019e1625-789d-76c0-80ab-3724b5ddb799";
const rolloutPath = `sessions/2026/11/23/rollout-2026-11-23T04-00-00-${codexId}.jsonl`;
/** Rollout lines as Codex writes them: `{ timestamp, type, payload }`. */
const rollout = [
  { timestamp: "2026-11-23T04:00:00.000Z", type: "session_meta", payload: { id: codexId, cwd: "/work" } },
  {
    timestamp: "2026-11-23T04:00:01.000Z",
    type: "response_item",
    payload: {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: "The secret fact is 42." }],
    },
  },
]
  .map((line) => JSON.stringify(line))
  .join("\n")
  .concat("\n");

describe("stowage session capture|restore --agent", () => {
  it("captures a Codex rollout and restores it under the same path in a fresh Codex home", async () => {
    const codexHome = join(dir, "codex-home");
    await mkdir(join(codexHome, "sessions", "2026", "11", "23"), { recursive: true });
    await writeFile(join(codexHome, rolloutPath), rollout);
    const captured = await stowage(
      "session",
      "capture",
      "--agent",
      "codex",
      "--codex-home",
      "codex-home",
      "--session",
      codexId,
      "--request",
      "cli-codex",
      "--user",
      "cli",
      "--json",
    );
    expect(JSON.parse(captured.stdout)).toMatchObject({ sessionId: codexId, agentType: "codex", files: 1 });
    // No codex on PATH (this environment has none) and no --codex: the thread's goal is not read, and it says so.
    expect(JSON.parse(captured.stdout).codexGoal).toEqual({
      read: false,
      reason: expect.stringContaining("no Codex CLI given"),
    });
    expect(captured.stderr).toContain("the thread's goal not read: no codex on PATH (give --codex <cli>)");
    // A --codex that cannot run fails the capture loudly rather than dropping the goal.
    await expectStowageError(
      stowage(
        ...["session", "capture", "--agent", "codex", "--codex-home", "codex-home", "--session", codexId],
        ...["--request", "cli-codex-2", "--user", "cli", "--codex", "./no-such-codex"],
      ),
      "UNAVAILABLE",
      "CODEX_CLI_FAILED",
    );
    const restored = await stowage(
      "session",
      "restore",
      "--codex-home",
      "fresh-codex",
      "--request",
      "cli-codex",
      "--user",
      "cli",
      "--json",
    );
    expect(JSON.parse(restored.stdout)).toMatchObject({
      sessionId: codexId,
      agentType: "codex",
      directory: join(dir, "fresh-codex", "sessions", "2026", "11", "23"),
    });
    expect(await readFile(join(dir, "fresh-codex", rolloutPath), "utf8")).toBe(rollout);
    expect(restored.stderr).toContain(`codex exec resume ${codexId}`);
    // Asked to restore it as a Claude Code session, it is refused.
    await expectStowageError(
      stowage("session", "restore", "--agent", "claude-code", "--request", "cli-codex", "--user", "cli"),
      "INVALID_INPUT",
      "AGENT_MISMATCH",
    );
  });

  it("captures and restores an OpenCode session through the CLI it is given", async () => {
    // The sessions package's stand-in for `opencode`, with the contract of OpenCode's own commands.
    await writeFakeOpencode(join(dir, "tools"));
    const sessionId = "ses_df96f1435ffed9ABkI498J7iJN";
    // Its database (in OpenCode's data directory under $HOME) holds one session of one message.
    await mkdir(dirname(fakeOpencodeDatabase(join(dir, "oc-home"))), { recursive: true });
    await writeFile(
      fakeOpencodeDatabase(join(dir, "oc-home")),
      JSON.stringify({
        sessions: { [sessionId]: { id: sessionId, title: "A fact" } },
        messages: { msg_1: { session_id: sessionId, info: { role: "user" } } },
        parts: {
          prt_1: {
            message_id: "msg_1",
            session_id: sessionId,
            data: { type: "text", text: "The secret fact is 42." },
          },
        },
      }),
    );
    const captureEnv = { ...env, HOME: join(dir, "oc-home") };
    const captured = await run(
      [
        "session",
        "capture",
        "--agent",
        "opencode",
        // A path: taken from the user's directory.
        "--opencode",
        "./tools/opencode",
        "--session",
        sessionId,
        "--request",
        "cli-oc",
        "--user",
        "cli",
      ],
      { cwd: dir, env: captureEnv },
    );
    expect(captured.stdout).toContain(`stored session ${sessionId} for request cli-oc: 1 files (opencode)`);
    await mkdir(join(dir, "oc-fresh"));
    // A bare command name: looked up on PATH, as a shell does (not in the user's directory).
    const restored = await run(
      ["session", "restore", "--opencode", "opencode", "--request", "cli-oc", "--user", "cli"],
      {
        cwd: dir,
        env: { ...env, HOME: join(dir, "oc-fresh"), PATH: `${join(dir, "tools")}:${process.env.PATH}` },
      },
    );
    expect(restored.stdout).toContain(
      `restored opencode session ${sessionId}: 1 files in OpenCode's database`,
    );
    const restoredDb = JSON.parse(await readFile(fakeOpencodeDatabase(join(dir, "oc-fresh")), "utf8"));
    expect(Object.keys(restoredDb.sessions)).toEqual([sessionId]);
    expect(restoredDb.parts.prt_1.data.text).toBe("The secret fact is 42.");
    await expectStowageError(
      stowage(
        "session",
        "capture",
        "--agent",
        "opencode",
        "--session",
        sessionId,
        "--request",
        "r",
        "--user",
        "cli",
      ),
      "INVALID_INPUT",
      "OPENCODE_CLI_MISSING",
    );
  });

  it("refuses an unknown agent as a usage error", async () => {
    await expect(
      stowage("session", "capture", "--agent", "aider", "--session", "s1", "--request", "r", "--user", "cli"),
    ).rejects.toBeInstanceOf(CommanderError);
  });
});
