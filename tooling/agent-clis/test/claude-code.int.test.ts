import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it, onTestFinished } from "vitest";
import {
  type AnthropicRequest,
  createAgentContainer,
  installAgentCli,
  requestsMention,
  runClaude,
  startAnthropicMock,
} from "../src/index.js";

const cli = await installAgentCli("claude-code");
const root = await tempDirectory("stowage-claude-cli-");

function lastUserContent(request: AnthropicRequest): string {
  return JSON.stringify(request.messages?.at(-1)?.content ?? "");
}

describe.skipIf(!cli.ready)("Claude Code against the Anthropic mock", () => {
  it("resumes a session: the resumed request carries the first prompt and the first reply", async () => {
    const mock = await startAnthropicMock();
    onTestFinished(() => mock.close());
    const { home, cwd } = await createAgentContainer(root, "resume");

    const first = await runClaude({
      cli,
      baseUrl: mock.url,
      home,
      cwd,
      prompt: "Remember: the code word is PELICAN-42.",
    });
    expect(first.code, first.report).toBe(0);
    expect(first.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const firstCount = mock.requests.length;
    expect(firstCount).toBeGreaterThan(0);
    expect(requestsMention(mock.requests, "PELICAN-42")).toBe(true);

    const second = await runClaude({
      cli,
      baseUrl: mock.url,
      home,
      cwd,
      prompt: "What was the code word?",
      resume: first.sessionId,
    });
    expect(second.code, second.report).toBe(0);
    expect(second.sessionId).toBe(first.sessionId);
    const resumed = mock.requests.slice(firstCount);
    expect(requestsMention(resumed, "What was the code word?")).toBe(true);
    expect(requestsMention(resumed, "PELICAN-42")).toBe(true);
    // The default canned reply of the first run ("mock reply 0: ...") went back to the model too.
    expect(requestsMention(resumed, "mock reply 0: received")).toBe(true);
  });

  it("follows a scripted tool_use turn: the next request carries the tool_result", async () => {
    const { home, cwd } = await createAgentContainer(root, "tool");
    const secretFile = join(cwd, "secret.txt");
    await writeFile(secretFile, "the vault code is ORCA-7\n");
    const mock = await startAnthropicMock({
      reply: (request, n) =>
        lastUserContent(request).includes("tool_result")
          ? { text: `read it (request ${n})` }
          : { toolUse: { name: "Read", input: { file_path: secretFile } } },
    });
    onTestFinished(() => mock.close());

    const run = await runClaude({
      cli,
      baseUrl: mock.url,
      home,
      cwd,
      prompt: "Read secret.txt",
      extraArgs: ["--allowedTools", "Read"],
    });
    expect(run.code, run.report).toBe(0);
    const withResult = mock.requests.filter(
      (request) =>
        request.path === "/v1/messages" &&
        lastUserContent(request.body as AnthropicRequest).includes("tool_result"),
    );
    expect(withResult).toHaveLength(1);
    expect(requestsMention(withResult, "ORCA-7")).toBe(true);
    expect(JSON.parse(run.stdout).result).toMatch(/^read it \(request \d+\)$/);
  });
});
