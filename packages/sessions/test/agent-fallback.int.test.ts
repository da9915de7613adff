import { chmod, mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type AgentCli,
  type AgentContainer,
  createAgentContainer,
  installAgentCli,
  type LoggedRequest,
  type MockModelServer,
  openCodeEnv,
  requestsMention,
  runClaude,
  runCodex,
  runOpenCode,
  startAnthropicMock,
  startChatMock,
  startResponsesMock,
} from "@stowage/agent-clis";
import { runChild, tempDirectory } from "@stowage/test-support";
import { describe, expect, it, onTestFinished } from "vitest";
import { stowageJson } from "./agent-stowage-cli.js";

// Document 002's fallback with the real CLIs: a session is told a fact and captured with the
// stowage CLI, its container wiped; restoring it is refused (the installed CLI a major version
// apart: AGENT_VERSION_MISMATCH), so `stowage session restore --fallback history` prints the
// conversation instead; a NEW session of the same real CLI started with that history in its prompt
// must send the fact to the model in its first request. Outside CI a CLI that cannot be installed
// skips its suite; in CI (`CI=true`) `installAgentCli` throws instead.
const claude = await installAgentCli("claude-code");
const codex = await installAgentCli("codex");
const opencode = await installAgentCli("opencode");
const root = await tempDirectory("stowage-e2e-fallback-");

/** Real CLI runs take seconds each (OpenCode about 6 s), many more on a loaded machine. */
const TIMEOUT_MS = 600_000;
const FACT = "the launch code is ZEBRA-1187";
const STOWAGE_BIN = new URL("../../../apps/reference/src/bin.ts", import.meta.url);

/** The next major version of the installed CLI: what every agent's table refuses. */
function nextMajor(cli: AgentCli): string {
  if (!cli.ready) throw new Error(cli.reason);
  return `${Number(cli.version.split(".")[0]) + 1}.0.0`;
}

/** An executable that prints `line` for `--version`: the installed CLI, as restore sees it, one major version on. */
async function newerCli(name: string, line: string): Promise<string> {
  const path = join(root, "bin", name);
  await mkdir(join(root, "bin"), { recursive: true });
  await writeFile(path, `#!${process.execPath}\nconsole.log(${JSON.stringify(line)});\n`);
  await chmod(path, 0o755);
  return path;
}

/**
 * `stowage session restore … --fallback history --json` with its own data directory: exit 0, the
 * history as JSON, and the one stderr line saying why the fallback was used.
 */
async function restoreWithFallback(dataDir: string, args: readonly string[], env: NodeJS.ProcessEnv) {
  const run = await runChild(
    STOWAGE_BIN,
    ["session", "restore", ...args, "--fallback", "history", "--json"],
    { env: { ...env, STOWAGE_DATA_DIR: dataDir } },
  );
  expect(run.code, run.stderr).toBe(0);
  const why = run.stderr.split("\n").find((line) => line.startsWith("fallback to history:"));
  return {
    history: JSON.parse(run.stdout) as { text: string; cause: { code: string; reason?: string } },
    why,
  };
}

/** The prompt of the new session: the history, then the question. */
const followUp = (history: string) =>
  `${history}\n\nThe stored session could not be resumed; the conversation above is what was said. What is the launch code?`;

/** The first request the model got that carries the prompt (a CLI may also ask for a title or count tokens). */
function firstPromptRequest(mock: MockModelServer, before: number): LoggedRequest | undefined {
  return mock.requests
    .slice(before)
    .find((request) => requestsMention([request], "What is the launch code?"));
}

/**
 * Starts a NEW session with the history in its prompt (`start`, one real CLI run) and expects the
 * model's first request of it to carry the fact and the earlier reply.
 */
async function expectNewSessionSees(
  mock: MockModelServer,
  history: string,
  earlierSessionId: string,
  start: (prompt: string) => Promise<{ code: number | null; report: string; sessionId?: string | undefined }>,
) {
  const before = mock.requests.length;
  const fresh = await start(followUp(history));
  expect(fresh.code, fresh.report).toBe(0);
  expect(fresh.sessionId).not.toBe(earlierSessionId);
  const seen = firstPromptRequest(mock, before);
  expect(seen, "no request of the new session carried its prompt").toBeDefined();
  expect(requestsMention([seen!], "ZEBRA-1187")).toBe(true);
  expect(requestsMention([seen!], "Assistant:\\nmock reply")).toBe(true);
}

function expectFallbackSeen(
  result: Awaited<ReturnType<typeof restoreWithFallback>>,
  request: string,
  sessionId: string,
  agent: string,
) {
  expect(result.history.cause).toMatchObject({ code: "CONFLICT", reason: "AGENT_VERSION_MISMATCH" });
  expect(result.history.text).toContain(FACT);
  // The assistant's side too: the mock's reply in the first session is in the history.
  expect(result.history.text).toMatch(/Assistant:\nmock reply \d+/);
  expect(result.why).toMatch(
    new RegExp(
      `^fallback to history: restore of request ${request} failed with CONFLICT AGENT_VERSION_MISMATCH; history of stored session ${sessionId} \\(${agent}\\)`,
    ),
  );
}

describe.skipIf(!claude.ready)(
  "Claude Code: the fallback history reaches a new session's model",
  { timeout: TIMEOUT_MS },
  () => {
    it("told, captured, wiped; restore refused; the history in a new session's prompt", async () => {
      const mock = await startAnthropicMock();
      onTestFinished(() => mock.close());
      const first = await createAgentContainer(root, "claude-1");
      const told = await runClaude({
        cli: claude,
        baseUrl: mock.url,
        ...first,
        prompt: `Remember: ${FACT}.`,
      });
      expect(told.code, told.report).toBe(0);
      const sessionId = told.sessionId as string;
      const dataDir = join(root, "claude-data");
      const request = ["--user", "alice", "--request", "req-claude-fallback"];
      const configDir = join(first.home, ".claude");
      await stowageJson(
        dataDir,
        [
          "session",
          "capture",
          ...request,
          "--session",
          sessionId,
          "--cwd",
          first.cwd,
          "--config-dir",
          configDir,
        ],
        { PATH: process.env.PATH, HOME: first.home },
      );
      await rm(first.home, { recursive: true });

      const second = await createAgentContainer(root, "claude-2");
      const cli = await newerCli("claude-next", `${nextMajor(claude)} (Claude Code)`);
      const result = await restoreWithFallback(
        dataDir,
        [...request, "--cwd", first.cwd, "--config-dir", join(second.home, ".claude"), "--agent-cli", cli],
        { PATH: process.env.PATH, HOME: second.home },
      );
      expectFallbackSeen(result, "req-claude-fallback", sessionId, "claude-code");

      await expectNewSessionSees(mock, result.history.text, sessionId, (prompt) =>
        runClaude({ cli: claude, baseUrl: mock.url, ...second, prompt }),
      );
    });
  },
);

describe.skipIf(!codex.ready)(
  "Codex: the fallback history reaches a new session's model",
  { timeout: TIMEOUT_MS },
  () => {
    it("told, captured, wiped; restore refused; the history in a new session's prompt", async () => {
      const mock = await startResponsesMock();
      onTestFinished(() => mock.close());
      const first = await createAgentContainer(root, "codex-1");
      const told = await runCodex({ cli: codex, baseUrl: mock.url, ...first, prompt: `Remember: ${FACT}.` });
      expect(told.code, told.report).toBe(0);
      const sessionId = told.sessionId as string;
      const dataDir = join(root, "codex-data");
      const request = ["--user", "alice", "--request", "req-codex-fallback"];
      await stowageJson(
        dataDir,
        [
          "session",
          "capture",
          "--agent",
          "codex",
          ...request,
          "--session",
          sessionId,
          "--codex-home",
          join(first.home, ".codex"),
        ],
        { PATH: process.env.PATH, HOME: first.home },
      );
      await rm(first.home, { recursive: true });

      const second = await createAgentContainer(root, "codex-2");
      const cli = await newerCli("codex-next", `codex-cli ${nextMajor(codex)}`);
      const result = await restoreWithFallback(
        dataDir,
        [...request, "--codex-home", join(second.home, ".codex"), "--agent-cli", cli],
        { PATH: process.env.PATH, HOME: second.home },
      );
      expectFallbackSeen(result, "req-codex-fallback", sessionId, "codex");

      await expectNewSessionSees(mock, result.history.text, sessionId, (prompt) =>
        runCodex({ cli: codex, baseUrl: mock.url, ...second, prompt }),
      );
    });
  },
);

describe.skipIf(!opencode.ready)(
  "OpenCode: the fallback history reaches a new session's model",
  { timeout: TIMEOUT_MS },
  () => {
    it("told, captured, wiped; restore refused; the history (from its export) in a new session's prompt", async () => {
      if (!opencode.ready) throw new Error(opencode.reason);
      const mock = await startChatMock();
      onTestFinished(() => mock.close());
      const first: AgentContainer = await createAgentContainer(root, "opencode-1");
      const told = await runOpenCode({
        cli: opencode,
        baseUrl: mock.url,
        ...first,
        prompt: `Remember: ${FACT}.`,
      });
      expect(told.code, told.report).toBe(0);
      const sessionId = told.sessionId as string;
      const dataDir = join(root, "opencode-data");
      const request = ["--user", "alice", "--request", "req-opencode-fallback"];
      const cliArgs = ["--opencode", opencode.command, "--cwd", first.cwd];
      await stowageJson(
        dataDir,
        ["session", "capture", "--agent", "opencode", ...request, "--session", sessionId, ...cliArgs],
        openCodeEnv(first.home),
      );
      await rm(first.home, { recursive: true });

      const second = await createAgentContainer(root, "opencode-2");
      const cli = await newerCli("opencode-next", nextMajor(opencode));
      const result = await restoreWithFallback(
        dataDir,
        [...request, "--opencode", opencode.command, "--cwd", second.cwd, "--agent-cli", cli],
        openCodeEnv(second.home),
      );
      expectFallbackSeen(result, "req-opencode-fallback", sessionId, "opencode");

      await expectNewSessionSees(mock, result.history.text, sessionId, (prompt) =>
        runOpenCode({ cli: opencode, baseUrl: mock.url, ...second, prompt }),
      );
    });
  },
);
