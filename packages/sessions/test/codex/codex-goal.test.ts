import { access } from "node:fs/promises";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { restoreSession } from "../../src/archive/restore-session.js";
import { buildArchive } from "../build-archive.js";

// The thread's goal in a Codex archive (`~codex/goal.json`, what `thread/goal/get` answered):
// checked before anything is written, and set again only through the Codex CLI's app server.
// The real CLI's round trip is in agent-goal-codex.int.test.ts.
const base = await tempDirectory("stowage-codex-goal-");
const sessionId = "019e1625-789d-76c0-80ab-3724b5ddb799";
const otherId = "019e1695-0522-7c83-8b39-0dd379793f80";
const rolloutPath = `2026/11/23/rollout-2026-11-23T04-00-00-${sessionId}.jsonl`;
const encoder = new TextEncoder();
const rollout = encoder.encode(
  `${JSON.stringify({
    timestamp: "2026-11-23T04:00:00.000Z",
    type: "session_meta",
    payload: { id: sessionId, cwd: "/work", originator: "codex_exec", cli_version: "0.169.0" },
  })}\n`,
);
/** A goal as Codex 0.169.0's `thread/goal/get` answers it (its `ThreadGoal` schema). */
const goal = {
  threadId: sessionId,
  objective: "Ship the parser",
  status: "active",
  tokenBudget: 5000,
  tokensUsed: 0,
  timeUsedSeconds: 0,
  createdAt: 1_795_959_029,
  updatedAt: 1_795_959_029,
};

function withGoal(content: Uint8Array | string) {
  return buildArchive({
    sessionId,
    files: [
      { path: rolloutPath, content: rollout },
      { path: "~codex/goal.json", content: typeof content === "string" ? encoder.encode(content) : content },
    ],
    manifest: { agent: "codex", projectKey: undefined },
  });
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe("a Codex archive's goal entry", () => {
  it("restores the rollout and says the goal was not set when no Codex CLI is given", async () => {
    const home = join(base, "no-cli");
    const restored = await restoreSession(await withGoal(JSON.stringify(goal)), { codexHome: home });
    expect(await exists(join(home, "sessions", rolloutPath))).toBe(true);
    // The goal is not a file of Codex's home: nothing but the rollout was written.
    expect(await exists(join(home, "~codex"))).toBe(false);
    expect(restored.codexGoal).toEqual({
      set: false,
      goal: { ...goal },
      reason: expect.stringContaining("no Codex CLI given"),
    });
  });

  it("keeps the session restored and says why when the Codex CLI cannot be run", async () => {
    const home = join(base, "missing-cli");
    const restored = await restoreSession(await withGoal(JSON.stringify(goal)), {
      codexHome: home,
      codex: { bin: join(base, "no-such-codex"), timeoutMs: 10_000 },
    });
    expect(await exists(join(home, "sessions", rolloutPath))).toBe(true);
    expect(restored.codexGoal).toMatchObject({ set: false, reason: expect.stringContaining("ENOENT") });
  });

  it("refuses codex options that are not { bin }", async () => {
    for (const codex of [{ bin: "" }, { bin: 7 }, { bin: "codex", timeoutMs: -1 }, null]) {
      await expectStowageError(
        restoreSession(await withGoal(JSON.stringify(goal)), {
          codexHome: join(base, "bad-options"),
          codex: codex as never,
        }),
        "INVALID_INPUT",
      );
    }
    expect(await exists(join(base, "bad-options"))).toBe(false);
  });

  // Hostile entries: refused with a clear code before a byte is written.
  const hostile: [string, Uint8Array | string, string, string][] = [
    ["not JSON", "{objective: ship", "INVALID_INPUT", "CODEX_GOAL_INVALID"],
    ["not UTF-8", new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), "INVALID_INPUT", "CODEX_GOAL_INVALID"],
    ["a JSON array", JSON.stringify([goal]), "INVALID_INPUT", "CODEX_GOAL_INVALID"],
    ["JSON null", "null", "INVALID_INPUT", "CODEX_GOAL_INVALID"],
    [
      "another thread's goal",
      JSON.stringify({ ...goal, threadId: otherId }),
      "INVALID_INPUT",
      "FOREIGN_ENTRY",
    ],
    ["no thread", JSON.stringify({ ...goal, threadId: undefined }), "INVALID_INPUT", "FOREIGN_ENTRY"],
    [
      "an empty objective",
      JSON.stringify({ ...goal, objective: "  " }),
      "INVALID_INPUT",
      "CODEX_GOAL_INVALID",
    ],
    [
      "a numeric objective",
      JSON.stringify({ ...goal, objective: 42 }),
      "INVALID_INPUT",
      "CODEX_GOAL_INVALID",
    ],
    ["an unknown status", JSON.stringify({ ...goal, status: "done" }), "INVALID_INPUT", "CODEX_GOAL_INVALID"],
    [
      "a negative budget",
      JSON.stringify({ ...goal, tokenBudget: -5 }),
      "INVALID_INPUT",
      "CODEX_GOAL_INVALID",
    ],
    [
      "a fractional budget",
      JSON.stringify({ ...goal, tokenBudget: 1.5 }),
      "INVALID_INPUT",
      "CODEX_GOAL_INVALID",
    ],
    [
      "oversized (over 64 KiB)",
      JSON.stringify({ ...goal, objective: "x".repeat(64 * 1024) }),
      "TOO_LARGE",
      "",
    ],
  ];
  it.each(hostile)("refuses a goal entry that is %s, writing nothing", async (why, content, code, reason) => {
    const home = join(base, `hostile-${why.replace(/\W+/g, "-")}`);
    await expectStowageError(
      restoreSession(await withGoal(content), { codexHome: home }),
      code as "INVALID_INPUT",
      reason || undefined,
    );
    expect(await exists(join(home, "sessions", rolloutPath))).toBe(false);
  });

  it("refuses a goal entry in another agent's archive", async () => {
    const archive = await buildArchive({
      sessionId,
      files: [
        { path: `${sessionId}.jsonl`, content: rollout },
        { path: "~codex/goal.json", content: encoder.encode(JSON.stringify(goal)) },
      ],
    });
    await expectStowageError(restoreSession(archive, { configDir: join(base, "claude") }), "INVALID_INPUT");
  });
});
