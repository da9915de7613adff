import { spawn } from "node:child_process";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import {
  createAgentContainer,
  installAgentCli,
  type ReadyAgentCli,
  runCodex,
  startResponsesMock,
} from "@stowage/agent-clis";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it, onTestFinished } from "vitest";
import { captureSession, restoreSession } from "../src/index.js";
import { overTheWire } from "./over-the-wire.js";

// Codex 0.169.0 keeps a thread's goal only in `$CODEX_HOME/goals_1.sqlite`. With the Codex CLI
// given, a capture reads it through `codex app-server` (thread/goal/get) and a restore sets it
// again (thread/goal/set). Proof with the real CLI: a goal set through the app server survives
// capture → wipe → restore, the resumed run's request to the model carries it, and a restore
// without the goal entry has none.
const cli = await installAgentCli("codex");
const root = await tempDirectory("stowage-e2e-goal-codex-");

/** Real CLI runs take seconds each, many more on a loaded machine. */
const TIMEOUT_MS = 600_000;
const OBJECTIVE = "KESTREL-7 migrate the parser to streaming";

/**
 * Asks `codex app-server` in `home` (JSON-RPC over stdio, written here apart from the code under
 * test) the `calls`, and returns the answers' results.
 */
function askAppServer(
  agent: ReadyAgentCli,
  home: string,
  calls: { method: string; params: unknown }[],
): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(agent.command, [...agent.args, "app-server"], {
      env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: join(home, ".codex") },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const results: unknown[] = [];
    let buffer = "";
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`codex app-server did not answer: ${JSON.stringify(results)}`));
    }, 60_000);
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      buffer += chunk;
      for (let end = buffer.indexOf("\n"); end >= 0; end = buffer.indexOf("\n")) {
        const message = JSON.parse(buffer.slice(0, end));
        buffer = buffer.slice(end + 1);
        if (typeof message.id !== "number") continue;
        if (message.error) reject(new Error(JSON.stringify(message.error)));
        if (message.id === 0) send({ method: "initialized" });
        else results.push(message.result);
        if (results.length === calls.length) {
          clearTimeout(timer);
          child.kill("SIGKILL");
          resolve(results);
          return;
        }
        send({ id: results.length + 1, ...calls[results.length] });
      }
    });
    send({
      id: 0,
      method: "initialize",
      params: { clientInfo: { name: "test", version: "0" }, capabilities: { experimentalApi: true } },
    });
  });
}

describe.skipIf(!cli.ready)("Codex: the thread's goal across a restore", { timeout: TIMEOUT_MS }, () => {
  it("captures the goal through the app server, sets it again on restore, and the resumed run pursues it", async () => {
    if (!cli.ready) return;
    // As a user who installed @openai/codex runs it: its `node_modules/.bin/codex`.
    const codexCli = { bin: join(cli.dir, "node_modules", ".bin", "codex"), timeoutMs: 60_000 };
    const mock = await startResponsesMock();
    onTestFinished(() => mock.close());
    const first = await createAgentContainer(root, "goal-1");
    const ran = await runCodex({ cli, baseUrl: mock.url, ...first, prompt: "Start the migration." });
    expect(ran.code, ran.report).toBe(0);
    const sessionId = ran.sessionId as string;
    const [set, before] = await askAppServer(cli, first.home, [
      {
        method: "thread/goal/set",
        params: { threadId: sessionId, objective: OBJECTIVE, status: "active", tokenBudget: 5000 },
      },
      { method: "thread/goal/get", params: { threadId: sessionId } },
    ]);
    expect(set).toMatchObject({ goal: { threadId: sessionId, objective: OBJECTIVE, status: "active" } });
    expect(before).toEqual(set);

    const codexHome = join(first.home, ".codex");
    const captured = await captureSession({ agent: "codex", sessionId, codexHome, codex: codexCli });
    expect(captured.codexGoal).toMatchObject({
      read: true,
      goal: { threadId: sessionId, objective: OBJECTIVE, status: "active", tokenBudget: 5000 },
    });
    expect(captured.manifest.files.map((file) => file.path)).toContain("~codex/goal.json");
    // The control: the same session captured without the CLI holds no goal, and says so.
    const withoutGoal = await captureSession({ agent: "codex", sessionId, codexHome });
    expect(withoutGoal.codexGoal).toMatchObject({ read: false });
    expect(withoutGoal.manifest.files.map((file) => file.path)).not.toContain("~codex/goal.json");
    await rm(first.home, { recursive: true });

    const second = await createAgentContainer(root, "goal-2");
    const restored = await restoreSession(overTheWire(captured), {
      codexHome: join(second.home, ".codex"),
      codex: codexCli,
    });
    expect(restored.codexGoal).toMatchObject({ set: true, goal: { objective: OBJECTIVE, status: "active" } });
    const [got] = await askAppServer(cli, second.home, [
      { method: "thread/goal/get", params: { threadId: sessionId } },
    ]);
    expect(got).toMatchObject({
      goal: { threadId: sessionId, objective: OBJECTIVE, status: "active", tokenBudget: 5000 },
    });
    const resumeStart = mock.requests.length;
    const resumed = await runCodex({
      cli,
      baseUrl: mock.url,
      ...second,
      prompt: "Go on.",
      resume: sessionId,
    });
    expect(resumed.code, resumed.report).toBe(0);
    // Codex hands the model the active goal (its `goal_objective` context) on the resumed turn.
    expect(JSON.stringify(mock.requests.slice(resumeStart).map((request) => request.body))).toContain(
      OBJECTIVE,
    );

    const control = await createAgentContainer(root, "goal-control");
    const plain = await restoreSession(overTheWire(withoutGoal), {
      codexHome: join(control.home, ".codex"),
      codex: codexCli,
    });
    expect(plain.codexGoal).toBeUndefined();
    expect(
      await askAppServer(cli, control.home, [{ method: "thread/goal/get", params: { threadId: sessionId } }]),
    ).toEqual([{ goal: null }]);
    const controlStart = mock.requests.length;
    const again = await runCodex({ cli, baseUrl: mock.url, ...control, prompt: "Go on.", resume: sessionId });
    expect(again.code, again.report).toBe(0);
    expect(JSON.stringify(mock.requests.slice(controlStart).map((request) => request.body))).not.toContain(
      OBJECTIVE,
    );
  });
});
