import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import {
  agentEnv,
  createAgentContainer,
  installAgentCli,
  requestsMention,
  runClaude,
  startAnthropicMock,
} from "@stowage/agent-clis";
import { createS3Client, createS3ObjectStore } from "@stowage/storage-s3";
import { s3ClientOptions, s3TestEnv, tempDirectory } from "@stowage/test-support";
import { describe, expect, it, onTestFinished } from "vitest";
import { sanitizeProjectPath } from "../src/claude/project-key.js";
import { createObjectSessionStore } from "../src/index.js";

// A real Claude Code session → imported into the object SessionStore on S3 (Ceph RGW) → the
// container's HOME wiped → resumed through the SDK from the store alone (the SDK loads the
// transcript and its subkeys, writes them to a temporary JSONL and starts the CLI with --resume)
// → the mock model sees the earlier conversation in the resumed request.
const cli = await installAgentCli("claude-code");
const s3 = s3TestEnv("SessionStore resume with the real Claude Code");
const root = await tempDirectory("stowage-session-store-resume-");
const FACT = "the vault code is HERON-5521";

// The SDK reads CLAUDE_CONFIG_DIR once per process: point it at the first container's config
// directory (where the CLI writes its session) before anything imports the SDK.
process.env.CLAUDE_CONFIG_DIR = join(root, "told-home", ".claude");

const TIMEOUT_MS = 600_000;

describe.skipIf(!cli.ready || !s3.ready)(
  "resume from the object SessionStore on S3 with the real Claude Code",
  { timeout: TIMEOUT_MS },
  () => {
    it("the resumed request carries the conversation the store held", async () => {
      if (!cli.ready) return;
      const sdk = await import("@anthropic-ai/claude-agent-sdk");
      const client = createS3Client(s3ClientOptions(s3));
      const sessionStore = createObjectSessionStore({
        store: createS3ObjectStore({
          client,
          bucket: s3.values.S3_BUCKET!,
          prefix: `test/session-store-resume/${randomUUID()}/`,
        }),
      });
      const mock = await startAnthropicMock();
      onTestFinished(() => mock.close());

      const told = await createAgentContainer(root, "told");
      const step = (what: string) => console.error(`[resume test] ${new Date().toISOString()} ${what}`);
      step("first run");
      const first = await runClaude({ cli, baseUrl: mock.url, ...told, prompt: `Remember: ${FACT}.` });
      expect(first.code, first.report).toBe(0);
      const sessionId = first.sessionId!;
      expect(requestsMention(mock.requests, "HERON-5521")).toBe(true);

      step("import");
      await sdk.importSessionToStore(sessionId, sessionStore, { dir: told.cwd });
      const stored = await sessionStore.load({ projectKey: sanitizeProjectPath(told.cwd), sessionId });
      expect(JSON.stringify(stored)).toContain("HERON-5521");
      onTestFinished(() => sessionStore.delete({ projectKey: sanitizeProjectPath(told.cwd), sessionId }));

      // The container is gone: nothing of the session is left on this disk but in the store.
      await rm(told.home, { recursive: true, force: true });
      const fresh = await createAgentContainer(root, "resumed");
      const before = mock.requests.length;
      step("resume");
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), 150_000);
      onTestFinished(() => clearTimeout(timer));
      const messages = sdk.query({
        prompt: "What is the vault code?",
        options: {
          cwd: told.cwd,
          resume: sessionId,
          abortController: abort,
          stderr: (data: string) => console.error(`[claude] ${data.trimEnd()}`),
          sessionStore,
          pathToClaudeCodeExecutable: cli.command,
          env: agentEnv(fresh.home, {
            ANTHROPIC_BASE_URL: mock.url,
            ANTHROPIC_API_KEY: "sk-ant-mock",
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
            DISABLE_AUTOUPDATER: "1",
          }),
        },
      });
      let result: string | undefined;
      for await (const message of messages) {
        step(`message ${message.type}`);
        if (message.type === "result") result = message.subtype;
      }
      expect(result).toBe("success");
      const resumed = mock.requests.slice(before);
      expect(resumed.length).toBeGreaterThan(0);
      expect(requestsMention(resumed, "HERON-5521")).toBe(true);
      expect(requestsMention(resumed, "What is the vault code?")).toBe(true);
    });
  },
);
