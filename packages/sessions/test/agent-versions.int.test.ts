import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  createAgentContainer,
  installAgentCli,
  requestsMention,
  runClaude,
  runCodex,
  startAnthropicMock,
  startResponsesMock,
} from "@stowage/agent-clis";
import { realTranscripts, tempDirectory } from "@stowage/test-support";
import { describe, expect, it, onTestFinished } from "vitest";
import { claudeProjectKey } from "../src/claude/project-key.js";
import { captureSession, restoreSession } from "../src/index.js";
import { versionOutput } from "./agent-version-checks.js";
import { overTheWire } from "./over-the-wire.js";

// Versions apart, with the real CLIs: the version table refuses only a major version apart
// (checked, with the version each CLI records, in agent-claude-code, agent-codex and
// agent-opencode.int.test.ts); these are why a minor apart is only a warning. Outside CI a CLI
// that cannot be installed skips its suite; in CI (`CI=true`) `installAgentCli` throws instead.
const claude = await installAgentCli("claude-code");
const codex = await installAgentCli("codex");
const root = await tempDirectory("stowage-e2e-versions-");
const real = realTranscripts("agent versions with the real CLIs");

/** Real CLI runs take seconds each, many more on a loaded machine. */
const TIMEOUT_MS = 600_000;

// Sessions real older CLIs wrote (../shared/real-transcripts) are captured, restored with the
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
