import { execFile } from "node:child_process";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type AgentCli,
  createAgentContainer,
  installAgentCli,
  openCodeEnv,
  requestsMention,
  runClaude,
  runCodex,
  runOpenCode,
  startAnthropicMock,
  startChatMock,
  startResponsesMock,
} from "@stowage/agent-clis";
import { expectStowageError } from "@stowage/core/testing";
import { realTranscripts, tempDirectory } from "@stowage/test-support";
import { describe, expect, it, onTestFinished } from "vitest";
import { claudeProjectKey } from "../src/claude/project-key.js";
import {
  agentVersionFromCliOutput,
  type CapturedSession,
  captureSession,
  restoreSession,
} from "../src/index.js";
import { stowageJson } from "./agent-stowage-cli.js";
import { overTheWire } from "./over-the-wire.js";

// Version detection with the real CLIs: a real run's capture records the version the session
// itself writes, which is the installed CLI's `--version`; restored with that CLI, through the
// library and through `stowage session restore`, it passes with no mismatch, and one major
// version apart is refused. Outside CI a CLI that cannot be installed skips its suite; in CI
// (`CI=true`) `installAgentCli` throws instead.
const claude = await installAgentCli("claude-code");
const codex = await installAgentCli("codex");
const opencode = await installAgentCli("opencode");
const root = await tempDirectory("stowage-e2e-versions-");
const real = realTranscripts("agent versions with the real CLIs");

/** Real CLI runs take seconds each, many more on a loaded machine. */
const TIMEOUT_MS = 600_000;

/** What `<cli> --version` prints, run as the tests start the CLI, bounded. */
function versionOutput(cli: AgentCli, env: NodeJS.ProcessEnv): Promise<string> {
  if (!cli.ready) throw new Error(cli.reason);
  return new Promise((resolve, reject) => {
    execFile(cli.command, [...cli.args, "--version"], { env, timeout: 60_000 }, (err, stdout) =>
      err ? reject(err) : resolve(stdout),
    );
  });
}

/** The version `--version` printed is the pinned one, and the one the session recorded. */
async function expectRecorded(cli: AgentCli, captured: CapturedSession, env: NodeJS.ProcessEnv) {
  if (!cli.ready) throw new Error(cli.reason);
  const output = await versionOutput(cli, env);
  expect(agentVersionFromCliOutput(output)?.text, output).toBe(cli.version);
  expect(captured.manifest.agentVersion).toBe(cli.version);
  return output;
}

/** The next major version: what the table refuses for every agent. */
const nextMajor = (version: string) => `${Number(version.split(".")[0]) + 1}.0.0`;

describe.skipIf(!claude.ready)("Claude Code: version recorded and checked", { timeout: TIMEOUT_MS }, () => {
  it("a real session records 2.1.x; restored with the installed CLI's --version, no mismatch", async () => {
    if (!claude.ready) throw new Error(claude.reason);
    const mock = await startAnthropicMock();
    onTestFinished(() => mock.close());
    const first = await createAgentContainer(root, "claude-1");
    const told = await runClaude({
      cli: claude,
      baseUrl: mock.url,
      ...first,
      prompt: "The code word is PELICAN-42.",
    });
    expect(told.code, told.report).toBe(0);
    const sessionId = told.sessionId as string;
    const configDir = join(first.home, ".claude");
    const captured = await captureSession({ configDir, cwd: first.cwd, sessionId });
    const env = { PATH: process.env.PATH, HOME: first.home };
    const output = await expectRecorded(claude, captured, env);

    const dataDir = join(root, "claude-data");
    const request = ["--user", "alice", "--request", "req-claude-version"];
    const stored = await stowageJson(
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
      env,
    );
    expect(stored.agentVersion).toBe(claude.version);
    await rm(first.home, { recursive: true });

    const second = await createAgentContainer(root, "claude-2");
    const into = { cwd: first.cwd, configDir: join(second.home, ".claude") };
    const restored = await restoreSession(overTheWire(captured), { ...into, agentVersion: output });
    expect(restored.agentVersionCheck).toEqual({ verdict: "same", version: claude.version });
    const viaCli = await stowageJson(
      dataDir,
      [
        ...["session", "restore", ...request, "--cwd", first.cwd, "--config-dir", into.configDir],
        ...["--agent-cli", claude.command],
      ],
      { PATH: process.env.PATH, HOME: second.home },
    );
    expect(viaCli.versionCheck).toEqual({ verdict: "same", version: claude.version });
    await expectStowageError(
      restoreSession(overTheWire(captured), { ...into, agentVersion: nextMajor(claude.version) }),
      "CONFLICT",
      "AGENT_VERSION_MISMATCH",
    );
  });
});

describe.skipIf(!codex.ready)("Codex: version recorded and checked", { timeout: TIMEOUT_MS }, () => {
  it("a real rollout records its cli_version; restored with the installed CLI's --version, no mismatch", async () => {
    if (!codex.ready) throw new Error(codex.reason);
    const mock = await startResponsesMock();
    onTestFinished(() => mock.close());
    const first = await createAgentContainer(root, "codex-1");
    const told = await runCodex({
      cli: codex,
      baseUrl: mock.url,
      ...first,
      prompt: "The code word is PELICAN-42.",
    });
    expect(told.code, told.report).toBe(0);
    const sessionId = told.sessionId as string;
    const codexHome = join(first.home, ".codex");
    const captured = await captureSession({ agent: "codex", codexHome, sessionId });
    const env = { PATH: process.env.PATH, HOME: first.home };
    const output = await expectRecorded(codex, captured, env);

    const dataDir = join(root, "codex-data");
    const request = ["--user", "alice", "--request", "req-codex-version"];
    const stored = await stowageJson(
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
        codexHome,
      ],
      env,
    );
    expect(stored.agentVersion).toBe(codex.version);
    await rm(first.home, { recursive: true });

    const second = await createAgentContainer(root, "codex-2");
    const into = { codexHome: join(second.home, ".codex") };
    const restored = await restoreSession(overTheWire(captured), { ...into, agentVersion: output });
    expect(restored.agentVersionCheck).toEqual({ verdict: "same", version: codex.version });
    // `codex.js` is the executable npm installs as `codex` (it starts the platform binary).
    const codexJs = codex.args[0] as string;
    expect(codexJs).toMatch(/codex\.js$/);
    const viaCli = await stowageJson(
      dataDir,
      [
        "session",
        "restore",
        ...request,
        "--codex-home",
        join(second.home, "cli-codex"),
        "--agent-cli",
        codexJs,
      ],
      { PATH: process.env.PATH, HOME: second.home },
    );
    expect(viaCli.versionCheck).toEqual({ verdict: "same", version: codex.version });
    await expectStowageError(
      restoreSession(overTheWire(captured), {
        ...into,
        agentVersion: `codex-cli ${nextMajor(codex.version)}`,
      }),
      "CONFLICT",
      "AGENT_VERSION_MISMATCH",
    );
  });
});

describe.skipIf(!opencode.ready)("OpenCode: version recorded and checked", { timeout: TIMEOUT_MS }, () => {
  it("a real export records info.version; restored with the OpenCode CLI in use, no mismatch", async () => {
    if (!opencode.ready) throw new Error(opencode.reason);
    const mock = await startChatMock();
    onTestFinished(() => mock.close());
    const first = await createAgentContainer(root, "opencode-1");
    const told = await runOpenCode({
      cli: opencode,
      baseUrl: mock.url,
      ...first,
      prompt: "The code word is PELICAN-42.",
    });
    expect(told.code, told.report).toBe(0);
    const sessionId = told.sessionId as string;
    const run = (home: string) => ({ bin: opencode.command, env: openCodeEnv(home), cwd: first.cwd });
    const captured = await captureSession({ agent: "opencode", sessionId, opencode: run(first.home) });
    const output = await expectRecorded(opencode, captured, openCodeEnv(first.home));

    const dataDir = join(root, "opencode-data");
    const request = ["--user", "alice", "--request", "req-opencode-version"];
    const cliArgs = ["--opencode", opencode.command, "--cwd", first.cwd];
    const stored = await stowageJson(
      dataDir,
      ["session", "capture", "--agent", "opencode", ...request, "--session", sessionId, ...cliArgs],
      openCodeEnv(first.home),
    );
    expect(stored.agentVersion).toBe(opencode.version);
    await rm(first.home, { recursive: true });

    const second = await createAgentContainer(root, "opencode-2");
    await expectStowageError(
      restoreSession(overTheWire(captured), {
        opencode: run(second.home),
        agentVersion: nextMajor(opencode.version),
      }),
      "CONFLICT",
      "AGENT_VERSION_MISMATCH",
    );
    const restored = await restoreSession(overTheWire(captured), {
      opencode: run(second.home),
      agentVersion: output,
    });
    expect(restored.agentVersionCheck).toEqual({ verdict: "same", version: opencode.version });
    // No --agent-cli: the OpenCode CLI that imports the session is the one whose version counts.
    const third = await createAgentContainer(root, "opencode-3");
    const viaCli = await stowageJson(
      dataDir,
      ["session", "restore", ...request, ...cliArgs],
      openCodeEnv(third.home),
    );
    expect(viaCli.versionCheck).toEqual({ verdict: "same", version: opencode.version });
  });
});

// The table refuses only a major version apart; these are why a minor apart is only a warning:
// sessions real older CLIs wrote (../shared/real-transcripts) are captured, restored with the
// pinned CLI's version (a warning, not a refusal) and resumed by it, and the model sees them.
describe.skipIf(!claude.ready || !real.present)(
  "Claude Code resumes transcripts of older 2.x versions",
  { timeout: TIMEOUT_MS },
  () => {
    for (const [file, sessionId, version, asked] of [
      [
        "claude-code/session-9eda1058.jsonl",
        "9eda1058-9706-484a-b992-d03f9cfa2546",
        "2.1.4",
        "show tools and store response in file",
      ],
      [
        "claude-code/session-196820da.jsonl",
        "196820da-1026-4b6f-a513-a6aae42da1a6",
        "2.0.76",
        "Caveat: The messages below were generate",
      ],
    ] as const) {
      it(`${version}: restored with a warning, resumed with the earlier conversation`, async () => {
        if (!claude.ready) throw new Error(claude.reason);
        const mock = await startAnthropicMock();
        onTestFinished(() => mock.close());
        const first = await createAgentContainer(root, `claude-real-${version}`);
        const configDir = join(first.home, ".claude");
        const projectDir = join(configDir, "projects", await claudeProjectKey(first.cwd));
        await mkdir(projectDir, { recursive: true });
        await writeFile(join(projectDir, `${sessionId}.jsonl`), real.read(file));
        const captured = await captureSession({ configDir, cwd: first.cwd, sessionId });
        expect(captured.manifest.agentVersion).toBe(version);
        await rm(first.home, { recursive: true });

        const second = await createAgentContainer(root, `claude-real-${version}-2`);
        const output = await versionOutput(claude, { PATH: process.env.PATH, HOME: second.home });
        const restored = await restoreSession(overTheWire(captured), {
          cwd: first.cwd,
          configDir: join(second.home, ".claude"),
          agentVersion: output,
        });
        expect(restored.agentVersionCheck).toMatchObject({
          verdict: "differs",
          captured: version,
          installed: claude.version,
        });
        const before = mock.requests.length;
        const resumed = await runClaude({
          cli: claude,
          baseUrl: mock.url,
          ...second,
          cwd: first.cwd,
          prompt: "What did I ask first?",
          resume: sessionId,
        });
        expect(resumed.code, resumed.report).toBe(0);
        expect(requestsMention(mock.requests.slice(before), asked)).toBe(true);
      });
    }
  },
);

describe.skipIf(!codex.ready || !real.present)(
  "Codex resumes a rollout of 0.125",
  { timeout: TIMEOUT_MS },
  () => {
    it("0.125.0: restored with a warning, resumed with the earlier conversation", async () => {
      if (!codex.ready) throw new Error(codex.reason);
      const mock = await startResponsesMock();
      onTestFinished(() => mock.close());
      const sessionId = "019e1625-789d-76c0-80ab-3724b5ddb799";
      const name = `rollout-2026-05-11T11-26-55-${sessionId}.jsonl`;
      const first = await createAgentContainer(root, "codex-real");
      const codexHome = join(first.home, ".codex");
      await mkdir(join(codexHome, "sessions", "2026", "05", "11"), { recursive: true });
      // Made against OpenAI; Codex refuses to switch a thread's provider on resume, so this copy
      // (in the test's temporary HOME only) names the mock in its session_meta.
      const rollout = real
        .read(`codex/${name}`)
        .replace('"model_provider":"openai"', '"model_provider":"mock"');
      await writeFile(join(codexHome, "sessions", "2026", "05", "11", name), rollout);
      const captured = await captureSession({ agent: "codex", codexHome, sessionId });
      expect(captured.manifest.agentVersion).toBe("0.125.0");
      await rm(first.home, { recursive: true });

      const second = await createAgentContainer(root, "codex-real-2");
      const output = await versionOutput(codex, { PATH: process.env.PATH, HOME: second.home });
      const restored = await restoreSession(overTheWire(captured), {
        codexHome: join(second.home, ".codex"),
        agentVersion: output,
      });
      expect(restored.agentVersionCheck).toMatchObject({
        verdict: "differs",
        captured: "0.125.0",
        installed: codex.version,
      });
      const before = mock.requests.length;
      const resumed = await runCodex({
        cli: codex,
        baseUrl: mock.url,
        ...second,
        prompt: "What did I ask first?",
        resume: sessionId,
      });
      expect(resumed.code, resumed.report).toBe(0);
      expect(requestsMention(mock.requests.slice(before), "show tools")).toBe(true);
    });
  },
);
