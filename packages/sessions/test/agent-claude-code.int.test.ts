import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import {
  type AnthropicRequest,
  createAgentContainer,
  installAgentCli,
  requestsMention,
  runClaude,
  startAnthropicMock,
} from "@stowage/agent-clis";
import { filesUnder, tempDirectory } from "@stowage/test-support";
import { describe, expect, it, onTestFinished } from "vitest";
import { captureSession, restoreSession } from "../src/index.js";
import { stowageJson } from "./agent-stowage-cli.js";
import { overTheWire } from "./over-the-wire.js";

// Capture → wipe the container → restore into a new one → resume, with the real Claude Code
// against a mock Anthropic API: the resumed request must carry the earlier conversation.
const cli = await installAgentCli("claude-code");
const root = await tempDirectory("stowage-e2e-claude-");

const FACT = "the launch code is ZEBRA-1187";

function messagesText(request: AnthropicRequest): string {
  return JSON.stringify(request.messages ?? []);
}

/** Real CLI runs take seconds each, many more on a loaded machine; the embedded database starts slowly. */
const TIMEOUT_MS = 240_000;

describe.skipIf(!cli.ready)(
  "Claude Code sessions captured, restored into a new HOME and resumed",
  { timeout: TIMEOUT_MS },
  () => {
    it("resumes a restored session: the model sees the fact told before the wipe", async () => {
      const mock = await startAnthropicMock();
      onTestFinished(() => mock.close());
      const first = await createAgentContainer(root, "fact-1");
      const told = await runClaude({ cli, baseUrl: mock.url, ...first, prompt: `Remember: ${FACT}.` });
      expect(told.code, told.report).toBe(0);
      const sessionId = told.sessionId as string;

      const captured = await captureSession({
        sessionId,
        cwd: first.cwd,
        configDir: join(first.home, ".claude"),
      });
      expect(captured.agent).toBe("claude-code");
      await rm(first.home, { recursive: true });

      // The new container has the same working directory (same project key), an empty HOME.
      const second = await createAgentContainer(root, "fact-2");
      const restored = await restoreSession(overTheWire(captured), {
        cwd: first.cwd,
        configDir: join(second.home, ".claude"),
      });
      expect(restored.sessionId).toBe(sessionId);

      const before = mock.requests.length;
      const resumed = await runClaude({
        cli,
        baseUrl: mock.url,
        home: second.home,
        cwd: first.cwd,
        prompt: "What is the launch code?",
        resume: sessionId,
      });
      expect(resumed.code, resumed.report).toBe(0);
      expect(resumed.sessionId).toBe(sessionId);
      const after = mock.requests.slice(before);
      expect(requestsMention(after, "What is the launch code?")).toBe(true);
      expect(requestsMention(after, FACT)).toBe(true);
      expect(requestsMention(after, "mock reply 0: received")).toBe(true);
    });

    it("round-trips through the stowage CLI: session capture, wipe, session restore, resume", async () => {
      const mock = await startAnthropicMock();
      onTestFinished(() => mock.close());
      const dataDir = join(root, "stowage-data");
      const first = await createAgentContainer(root, "cli-1");
      const told = await runClaude({ cli, baseUrl: mock.url, ...first, prompt: `Remember: ${FACT}.` });
      expect(told.code, told.report).toBe(0);
      const sessionId = told.sessionId as string;

      const stored = await stowageJson(dataDir, [
        "session",
        "capture",
        "--user",
        "alice",
        "--request",
        "req-e2e",
        "--session",
        sessionId,
        "--cwd",
        first.cwd,
        "--config-dir",
        join(first.home, ".claude"),
      ]);
      expect(stored.sessionId).toBe(sessionId);
      await rm(first.home, { recursive: true });

      const second = await createAgentContainer(root, "cli-2");
      const restored = await stowageJson(dataDir, [
        "session",
        "restore",
        "--user",
        "alice",
        "--request",
        "req-e2e",
        "--cwd",
        first.cwd,
        "--config-dir",
        join(second.home, ".claude"),
      ]);
      expect(restored.sessionId).toBe(sessionId);

      const before = mock.requests.length;
      const resumed = await runClaude({
        cli,
        baseUrl: mock.url,
        home: second.home,
        cwd: first.cwd,
        prompt: "What is the launch code?",
        resume: sessionId,
      });
      expect(resumed.code, resumed.report).toBe(0);
      expect(requestsMention(mock.requests.slice(before), FACT)).toBe(true);
    });

    it("brings back the subagent transcript and the tool-results file, which the resumed session reads", async () => {
      // The script: Bash prints ~340 KB (Claude Code keeps it in tool-results/<id>.txt), then a
      // subagent answers with a word; after the resume, the model reads the restored tool-results file.
      let toolResultsFile = "";
      const mock = await startAnthropicMock({
        reply: (request) => {
          const last = JSON.stringify(request.messages?.at(-1)?.content ?? "");
          if (JSON.stringify(request.messages?.[0] ?? "").includes("SUBAGENT-TASK"))
            return { text: "subagent says HERON-5" };
          if (last.includes("toolu_read")) return { text: "read the restored output" };
          if (last.includes("What did the numbers end with?"))
            return {
              toolUse: {
                id: "toolu_read",
                name: "Read",
                input: { file_path: toolResultsFile, offset: 59990, limit: 20 },
              },
            };
          if (last.includes("toolu_agent")) return { text: "bash and subagent done" };
          if (last.includes("toolu_bash")) {
            return {
              toolUse: {
                id: "toolu_agent",
                name: "Agent",
                input: {
                  description: "say a word",
                  prompt: "SUBAGENT-TASK: say a word",
                  subagent_type: "general-purpose",
                  run_in_background: false,
                },
              },
            };
          }
          return {
            toolUse: {
              id: "toolu_bash",
              name: "Bash",
              input: { command: "seq 1 60000", description: "numbers" },
            },
          };
        },
      });
      onTestFinished(() => mock.close());
      const first = await createAgentContainer(root, "companion-1");
      const allowed = ["--allowedTools", "Bash", "Agent", "Read"];
      const ran = await runClaude({
        cli,
        baseUrl: mock.url,
        ...first,
        prompt: "Count, then delegate.",
        extraArgs: allowed,
      });
      expect(ran.code, ran.report).toBe(0);
      const sessionId = ran.sessionId as string;

      const captured = await captureSession({
        sessionId,
        cwd: first.cwd,
        configDir: join(first.home, ".claude"),
      });
      const paths = captured.manifest.files.map((file) => file.path).sort();
      // The layout of Claude Code 2.1.2 and later: <id>.jsonl and <id>/{subagents,tool-results}/.
      expect(paths).toContain(`${sessionId}.jsonl`);
      expect(paths.filter((path) => /^[^/]+\/subagents\/agent-[^/]+\.jsonl$/.test(path))).toHaveLength(1);
      expect(paths.filter((path) => /^[^/]+\/tool-results\/[^/]+\.txt$/.test(path))).toHaveLength(1);
      const projectDir = join(first.home, ".claude", "projects", captured.projectKey as string);
      const originals = new Map<string, Buffer>();
      for (const path of await filesUnder(projectDir))
        originals.set(path, await readFile(join(projectDir, path)));
      await rm(first.home, { recursive: true });

      const second = await createAgentContainer(root, "companion-2");
      const restored = await restoreSession(overTheWire(captured), {
        cwd: first.cwd,
        configDir: join(second.home, ".claude"),
      });
      const restoredDir = restored.projectDir as string;
      expect(await filesUnder(restoredDir)).toEqual([...originals.keys()]);
      for (const [path, bytes] of originals) expect(await readFile(join(restoredDir, path))).toEqual(bytes);

      toolResultsFile = join(restoredDir, paths.find((path) => path.includes("/tool-results/")) as string);
      const before = mock.requests.length;
      const resumed = await runClaude({
        cli,
        baseUrl: mock.url,
        home: second.home,
        cwd: first.cwd,
        prompt: "What did the numbers end with?",
        resume: sessionId,
        extraArgs: allowed,
      });
      expect(resumed.code, resumed.report).toBe(0);
      const after = mock.requests.slice(before).map((request) => request.body as AnthropicRequest);
      // The earlier turns came back: the subagent's hand-back and the persisted-output marker.
      expect(after.some((request) => messagesText(request).includes("subagent says HERON-5"))).toBe(true);
      expect(after.some((request) => messagesText(request).includes("persisted-output"))).toBe(true);
      // And the restored tool-results file is readable where the resumed session looks for it.
      const readBack = after.find((request) =>
        JSON.stringify(request.messages?.at(-1) ?? "").includes("toolu_read"),
      );
      expect(JSON.stringify(readBack?.messages?.at(-1))).toContain("59999");
      expect(JSON.stringify(readBack?.messages?.at(-1))).toContain("60000");
    });
  },
);
