import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeOpencodeDatabase, writeFakeOpencode } from "../../../packages/sessions/test/fake-opencode.js";
import { spawnStowage } from "./support/cli.js";
import { seedEmbeddedDatabase } from "./support/seed-embedded-database.js";

// Issue 33 item 6: `--agent opencode` asked for `--opencode` even with `opencode` on PATH. Without
// the option the one on PATH is used, and the output says which; with none, the error names the option.

const SESSION = "ses_df96f1435ffed9ABkI498J7iJN";

let dir: string;
let tools: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "stowage-opencode-path-"));
  // The data directory the CLI uses by default in `dir` (`.stowage`).
  await seedEmbeddedDatabase(join(dir, ".stowage"));
  // The sessions package's stand-in for `opencode`, with the contract of OpenCode's own commands.
  tools = join(dir, "tools");
  await writeFakeOpencode(tools);
  // Its database (in OpenCode's data directory under $HOME) holds one session of one message.
  await mkdir(dirname(fakeOpencodeDatabase(join(dir, "oc-home"))), { recursive: true });
  await writeFile(
    fakeOpencodeDatabase(join(dir, "oc-home")),
    JSON.stringify({
      sessions: { [SESSION]: { id: SESSION, title: "A fact" } },
      messages: { msg_1: { session_id: SESSION, info: { role: "user" } } },
      parts: {
        prt_1: {
          message_id: "msg_1",
          session_id: SESSION,
          data: { type: "text", text: "The secret fact is 42." },
        },
      },
    }),
  );
  await mkdir(join(dir, "oc-fresh"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const withTools = () => `${tools}:${process.env.PATH}`;

describe("stowage session capture|restore --agent opencode without --opencode", () => {
  it("uses the opencode on PATH and says which", async () => {
    const captured = await spawnStowage(
      [
        "session",
        "capture",
        "--agent",
        "opencode",
        "--session",
        SESSION,
        "--request",
        "r1",
        "--user",
        "u",
        "--json",
      ],
      { cwd: dir, env: { HOME: join(dir, "oc-home"), PATH: withTools() } },
    );
    expect({ code: captured.code, stderr: captured.stderr }).toMatchObject({
      code: 0,
      stderr: expect.stringContaining(
        `exported with the OpenCode CLI ${join(tools, "opencode")} (found on PATH)`,
      ),
    });
    expect(JSON.parse(captured.stdout)).toMatchObject({
      agentType: "opencode",
      opencodeCli: join(tools, "opencode"),
    });

    const restored = await spawnStowage(["session", "restore", "--request", "r1", "--user", "u", "--json"], {
      cwd: dir,
      env: { HOME: join(dir, "oc-fresh"), PATH: withTools() },
    });
    expect({ code: restored.code, stderr: restored.stderr }).toMatchObject({
      code: 0,
      stderr: expect.stringContaining(
        `imported with the OpenCode CLI ${join(tools, "opencode")} (found on PATH)`,
      ),
    });
    expect(JSON.parse(restored.stdout)).toMatchObject({
      agentType: "opencode",
      opencodeCli: join(tools, "opencode"),
    });
    const db = JSON.parse(await readFile(fakeOpencodeDatabase(join(dir, "oc-fresh")), "utf8"));
    expect(db.parts.prt_1.data.text).toBe("The secret fact is 42.");

    // No opencode on PATH: restoring the OpenCode session says to give --opencode.
    const without = await spawnStowage(["session", "restore", "--request", "r1", "--user", "u"], {
      cwd: dir,
      env: { HOME: join(dir, "oc-fresh"), PATH: "/nonexistent" },
    });
    expect({ code: without.code, stderr: without.stderr }).toMatchObject({
      code: 1,
      stderr: expect.stringContaining(
        "there is no opencode on PATH: give --opencode <path to the opencode CLI>",
      ),
    });
  }, 180_000);

  it("refuses a capture with no opencode on PATH, naming --opencode", async () => {
    const run = await spawnStowage(
      [
        "session",
        "capture",
        "--agent",
        "opencode",
        "--session",
        SESSION,
        "--request",
        "r2",
        "--user",
        "u",
        "--json",
      ],
      { cwd: dir, env: { PATH: "/nonexistent" } },
    );
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stderr)).toMatchObject({ code: "INVALID_INPUT", reason: "OPENCODE_CLI_MISSING" });
    expect(JSON.parse(run.stderr).error).toContain("give --opencode");
  }, 60_000);
});
