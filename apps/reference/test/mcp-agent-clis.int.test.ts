import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type AnthropicRequest,
  createAgentContainer,
  installAgentCli,
  runClaude,
  runCodex,
  runOpenCode,
  startAnthropicMock,
  startChatMock,
  startResponsesMock,
} from "@stowage/agent-clis";
import { encodePng, tempDirectory } from "@stowage/test-support";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
// The README of @stowage/mcp holds the client configurations these runs use, as they are.
import {
  binOnPath,
  codexCallsReadArtifact,
  codexToolOutputs,
  openCodeCallsReadArtifact,
  openCodeToolResults,
  readmeSnippet,
} from "../../../packages/mcp/test/readme-clients.js";
import { openSessionStores } from "../src/cli/shared-stores.js";
import { loadStorageConfig } from "../src/config.js";
import { STOWAGE_BIN, seedMcpSession } from "./support/stowage-mcp.js";
import { startTestApp, type TestApp } from "./support/test-app.js";

// The real agent CLIs as MCP clients of the reference app: `stowage mcp` over stdio (Claude Code)
// and the HTTP route with an API key (Claude Code, Codex, OpenCode), each configured with the
// @stowage/mcp README's snippet. The mock model calls a Stowage tool; its next request must carry
// the result.
const claude = await installAgentCli("claude-code");
const codex = await installAgentCli("codex");
const opencode = await installAgentCli("opencode");
const root = await tempDirectory("stowage-app-mcp-clis-");
/** The session id and the address the README's snippets name. */
const SESSION_ID = "0b6f4e0a-9f0c-4d35-8a1e-2f4f1c1b7a11";
const README_SERVER = "http://127.0.0.1:3000";
const alice = { kind: "user", id: "alice" } as const;
const PNG = encodePng(2, 2, () => [0, 0, 255]);
const CLAUDE_TOOL = "mcp__stowage__read_artifact";
/** The seeded artifact's second line: what the tool result must carry to the model. */
const EXPECTED = "42 passing";

const lastUserContent = (request: AnthropicRequest) =>
  JSON.stringify(request.messages?.at(-1)?.content ?? "");

/** A Claude mock that calls read_artifact on artifact 0 once offered, then answers. */
async function claudeMock() {
  const mock = await startAnthropicMock({
    reply: (request) => {
      if (lastUserContent(request).includes("tool_result")) return { text: "got it" };
      return request.tools?.some((tool) => tool.name === CLAUDE_TOOL)
        ? { toolUse: { name: CLAUDE_TOOL, input: { id: 0 } } }
        : { text: "no stowage tool offered" };
    },
  });
  onTestFinished(() => mock.close());
  return mock;
}

function claudeToolResult(mock: { requests: readonly { path: string; body: unknown }[] }): string {
  const results = mock.requests
    .filter((request) => request.path === "/v1/messages")
    .map((request) => lastUserContent(request.body as AnthropicRequest))
    .filter((content) => content.includes("tool_result"));
  expect(results).toHaveLength(1);
  return results[0]!;
}

// Each test runs a real CLI: seconds on a quiet machine, up to ten times that in CI.
const TIMEOUT = { timeout: 600_000 };

describe.skipIf(!claude.ready)("Claude Code with `stowage mcp` (stdio)", TIMEOUT, () => {
  it("calls read_artifact on the principal's session and sends the result to the model", async () => {
    const { home, cwd } = await createAgentContainer(root, "claude-cli");
    // The snippet's `stowage mcp` uses ./.stowage of the directory Claude Code starts it in.
    const stores = await openSessionStores(
      loadStorageConfig({ STOWAGE_DATA_DIR: join(cwd, ".stowage") }, cwd),
    );
    try {
      await seedMcpSession(stores.tenant(alice), SESSION_ID, PNG);
    } finally {
      await stores.close();
    }
    const mock = await claudeMock();
    const run = await runClaude({
      cli: claude,
      baseUrl: mock.url,
      home,
      cwd,
      prompt: "How many tests pass in artifact://0?",
      mcpConfig: await readmeSnippet("claude-code-stowage-cli"),
      extraArgs: ["--allowedTools", CLAUDE_TOOL],
      env: {
        ENABLE_TOOL_SEARCH: "false",
        PATH: await binOnPath(join(root, "claude-cli"), "stowage", STOWAGE_BIN),
      },
    });
    expect(run.code, run.report).toBe(0);
    const result = claudeToolResult(mock);
    expect(result).toContain(EXPECTED);
    expect(result).not.toContain('"is_error":true');
  }, 180_000);
});

describe("the app's MCP route with an API key", TIMEOUT, () => {
  let app: TestApp;
  let key: string;
  /** A README snippet with the test server's address for the README's. */
  const snippet = async (tag: string) => (await readmeSnippet(tag)).replaceAll(README_SERVER, app.url);

  beforeAll(async () => {
    app = await startTestApp();
    key = await app.keyFor(alice);
    await seedMcpSession(app.server.services.tenant(alice), SESSION_ID, PNG);
  });
  afterAll(() => app?.close());

  it.skipIf(!claude.ready)(
    "Claude Code (.mcp.json, type http) calls read_artifact",
    async () => {
      const { home, cwd } = await createAgentContainer(root, "claude-http");
      const mock = await claudeMock();
      const run = await runClaude({
        cli: claude,
        baseUrl: mock.url,
        home,
        cwd,
        prompt: "How many tests pass in artifact://0?",
        mcpConfig: await snippet("claude-code-http"),
        extraArgs: ["--allowedTools", CLAUDE_TOOL],
        env: { ENABLE_TOOL_SEARCH: "false", STOWAGE_API_KEY: key },
      });
      expect(run.code, run.report).toBe(0);
      expect(claudeToolResult(mock)).toContain(EXPECTED);
    },
    180_000,
  );

  it.skipIf(!codex.ready)(
    "Codex (config.toml, url and bearer_token_env_var) calls read_artifact",
    async () => {
      const { home, cwd } = await createAgentContainer(root, "codex-http");
      const mock = await startResponsesMock({ reply: codexCallsReadArtifact({ id: 0 }) });
      onTestFinished(() => mock.close());
      await mkdir(join(home, ".codex"), { recursive: true });
      await writeFile(join(home, ".codex", "config.toml"), await snippet("codex-http"));
      const run = await runCodex({
        cli: codex,
        baseUrl: mock.url,
        home,
        cwd,
        prompt: "How many tests pass in artifact://0?",
        env: { STOWAGE_API_KEY: key },
      });
      expect(run.code, run.report).toBe(0);
      const outputs = codexToolOutputs(mock.requests);
      expect(outputs.length, "the tool's result went back to the model").toBeGreaterThan(0);
      expect(JSON.stringify(outputs[0]!.output)).toContain(EXPECTED);
    },
    180_000,
  );

  it.skipIf(!opencode.ready)(
    "OpenCode (opencode.json, type remote) calls read_artifact",
    async () => {
      const { home, cwd } = await createAgentContainer(root, "opencode-http");
      const mock = await startChatMock({ reply: openCodeCallsReadArtifact({ id: 0 }) });
      onTestFinished(() => mock.close());
      await mkdir(join(home, ".config", "opencode"), { recursive: true });
      await writeFile(join(home, ".config", "opencode", "opencode.json"), await snippet("opencode-http"));
      const run = await runOpenCode({
        cli: opencode,
        baseUrl: mock.url,
        home,
        cwd,
        prompt: "How many tests pass in artifact://0?",
        env: { STOWAGE_API_KEY: key },
      });
      expect(run.code, run.report).toBe(0);
      const results = openCodeToolResults(mock.requests);
      expect(results.length, "the tool's result went back to the model").toBeGreaterThan(0);
      expect(JSON.stringify(results[0]!.content)).toContain(EXPECTED);
    },
    180_000,
  );
});
