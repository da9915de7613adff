import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type AgentContainer,
  type ChatRequest,
  createAgentContainer,
  installAgentCli,
  openCodeEnv,
  runOpenCode,
  startChatMock,
} from "@stowage/agent-clis";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { captureSession, type OpencodeCliOptions, restoreSession } from "../src/index.js";
import { TINY_MCP_SERVER } from "./environment-diff.js";
import { overTheWire } from "./over-the-wire.js";

// OpenCode's configuration captured on request (`withConfig`), proven with the real CLI: the
// user's ~/.config/opencode/opencode.json declares an MCP server (a secret in its `environment`,
// left out) and ~/.config/opencode/AGENTS.md gives a rule; the project's opencode.json (the mock
// provider, its `apiKey` left out) is captured too. After capture, wipe and restore into a new
// HOME, the resumed run's request carries the rule and offers the server's tool (OpenCode builds
// both from its configuration at every request, never from the session); restored without the
// configuration, neither.
const cli = await installAgentCli("opencode");
const root = await tempDirectory("stowage-e2e-config-opencode-");
const TIMEOUT_MS = 600_000;
const RULE = "USER-RULE-MARKER: answer like a pirate";
const TOOL = "tiny_ping";

function opencodeIn(container: AgentContainer, cwd = container.cwd): OpencodeCliOptions {
  if (!cli.ready) throw new Error(cli.reason);
  return { bin: cli.command, env: openCodeEnv(container.home), cwd };
}

describe.skipIf(!cli.ready)(
  "OpenCode: the configuration captured on request",
  { timeout: TIMEOUT_MS },
  () => {
    it("restores opencode.json (secrets left out) and AGENTS.md where the resumed CLI reads them", async () => {
      const first = await createAgentContainer(root, "opencode-config-1");
      const configDir = join(first.home, ".config", "opencode");
      await mkdir(configDir, { recursive: true });
      const server = join(root, "tiny-mcp.cjs");
      await writeFile(server, TINY_MCP_SERVER);
      const userConfig = `{
  // the user's MCP server
  "mcp": {
    "tiny": { "type": "local", "command": [${JSON.stringify(process.execPath)}, ${JSON.stringify(server)}], "environment": { "TINY_TOKEN": "t-secret" } }
  }
}
`;
      await writeFile(join(configDir, "opencode.json"), userConfig);
      await writeFile(join(configDir, "AGENTS.md"), `${RULE}\n`);
      const mock = await startChatMock({ reply: (_request: ChatRequest, n: number) => `answer ${n}` });
      const bodies = (from: number) =>
        JSON.stringify(mock.requests.slice(from).map((request) => request.body));
      try {
        const ran = await runOpenCode({ cli, baseUrl: mock.url, ...first, prompt: "Say hi" });
        expect(ran.code, ran.report).toBe(0);
        expect(bodies(0)).toContain(RULE);
        expect(bodies(0)).toContain(TOOL);
        const sessionId = ran.sessionId as string;
        const captured = await captureSession({
          agent: "opencode",
          sessionId,
          opencode: opencodeIn(first),
          withConfig: true,
        });
        expect(captured.manifest.files.map((file) => file.path).slice(1)).toEqual([
          "~user/opencode.json",
          "~user/AGENTS.md",
          "~project/opencode.json",
        ]);
        expect(captured.secretsLeftOut).toEqual([
          { path: "~user/opencode.json", field: "mcp.tiny.environment.TINY_TOKEN" },
          { path: "~project/opencode.json", field: "provider.mock.options.apiKey" },
        ]);
        const bare = await captureSession({ agent: "opencode", sessionId, opencode: opencodeIn(first) });
        const agentsBytes = await readFile(join(configDir, "AGENTS.md"));
        await rm(first.home, { recursive: true });

        const second = await createAgentContainer(root, "opencode-config-2");
        // Imported from the directory it is resumed in (see agent-environment-opencode.int.test.ts),
        // whose opencode.json is still there: kept as it is.
        const restored = await restoreSession(overTheWire(captured), {
          opencode: opencodeIn(second, first.cwd),
        });
        expect(restored.configuration).toEqual({
          written: ["~user/opencode.json", "~user/AGENTS.md"],
          unchanged: [],
          kept: ["~project/opencode.json"],
          skipped: [],
        });
        const restoredDir = join(second.home, ".config", "opencode");
        expect(await readFile(join(restoredDir, "AGENTS.md"))).toEqual(agentsBytes);
        const restoredConfig = await readFile(join(restoredDir, "opencode.json"), "utf8");
        expect(restoredConfig).not.toContain("t-secret");
        expect(restoredConfig).toContain("// the user's MCP server");
        const control = await createAgentContainer(root, "opencode-config-control");
        await restoreSession(overTheWire(bare), { opencode: opencodeIn(control, first.cwd) });

        const resume = async (home: string) => {
          const before = mock.requests.length;
          const result = await runOpenCode({
            cli,
            baseUrl: mock.url,
            home,
            cwd: first.cwd,
            prompt: "Again",
            resume: sessionId,
          });
          expect(result.code, result.report).toBe(0);
          return bodies(before);
        };
        const resumed = await resume(second.home);
        expect(resumed).toContain("Say hi");
        expect(resumed).toContain(RULE);
        expect(resumed).toContain(TOOL);
        const without = await resume(control.home);
        expect(without).toContain("Say hi");
        expect(without).not.toContain(RULE);
        expect(without).not.toContain(TOOL);
      } finally {
        await mock.close();
      }
    });
  },
);
