import { join } from "node:path";
import {
  type AnthropicRequest,
  createAgentContainer,
  installAgentCli,
  runClaude,
  startAnthropicMock,
} from "@stowage/agent-clis";
import { createSessionFiles } from "@stowage/artifacts";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it, onTestFinished } from "vitest";
import { binOnPath, readmeSnippet } from "./readme-clients.js";
import { STOWAGE_MCP_BIN } from "./stdio-command.js";

// The real Claude Code CLI as the MCP client: it starts the stowage-mcp bin from the README's
// `.mcp.json` snippet, the mock model answers with a tool_use of mcp__stowage__read_artifact, and
// the model's next request must carry the artifact's content as the tool_result.
const cli = await installAgentCli("claude-code");
const root = await tempDirectory("stowage-mcp-claude-");
const TOOL = "mcp__stowage__read_artifact";
/** The session id the README's snippets name. */
const SESSION_ID = "0b6f4e0a-9f0c-4d35-8a1e-2f4f1c1b7a11";

const lastUserContent = (request: AnthropicRequest) =>
  JSON.stringify(request.messages?.at(-1)?.content ?? "");

describe.skipIf(!cli.ready)("Claude Code as the MCP client of stowage-mcp", () => {
  it("calls read_artifact and sends the artifact's content back to the model", async () => {
    const { home, cwd } = await createAgentContainer(root, "mcp");
    // `./sessions` of the snippet, in the project directory Claude Code starts the server in.
    const session = await createSessionFiles({ dir: join(cwd, "sessions") }).create(SESSION_ID);
    const id = await session.artifacts.saveArtifact(
      "bash",
      "$ make deploy\nbuilding…\nthe deploy token is HERON-93\ndone\n",
    );

    const mock = await startAnthropicMock({
      reply: (request, n) => {
        if (lastUserContent(request).includes("tool_result")) return { text: `got it (request ${n})` };
        if (request.tools?.some((tool) => tool.name === TOOL))
          return { toolUse: { name: TOOL, input: { id } } };
        return { text: "no stowage tool offered" };
      },
    });
    onTestFinished(() => mock.close());

    const run = await runClaude({
      cli,
      baseUrl: mock.url,
      home,
      cwd,
      prompt: `What is the deploy token in artifact://${id}?`,
      mcpConfig: await readmeSnippet("claude-code-stowage-mcp"),
      extraArgs: ["--allowedTools", TOOL],
      // Claude Code 2.1 defers MCP tools behind its ToolSearch tool; off, they are offered to the
      // model directly, as a scripted model needs.
      env: { ENABLE_TOOL_SEARCH: "false", PATH: await binOnPath(root, "stowage-mcp", STOWAGE_MCP_BIN) },
    });
    expect(run.code, run.report).toBe(0);

    const messages = mock.requests.filter((request) => request.path === "/v1/messages");
    const offered = messages.filter((request) =>
      (request.body as AnthropicRequest).tools?.some((tool) => tool.name === TOOL),
    );
    expect(offered.length, "Claude Code offered the stowage tools to the model").toBeGreaterThan(0);
    const withResult = messages.filter((request) =>
      lastUserContent(request.body as AnthropicRequest).includes("tool_result"),
    );
    expect(withResult).toHaveLength(1);
    const result = lastUserContent(withResult[0]!.body as AnthropicRequest);
    expect(result).toContain("the deploy token is HERON-93");
    // Claude Code sends the model the result's structuredContent: the text and where it ends.
    expect(result).toContain('\\"next_offset\\":null');
    expect(result).not.toContain('"is_error":true');
    expect(JSON.parse(run.stdout).result).toMatch(/^got it \(request \d+\)$/);
  });
});
