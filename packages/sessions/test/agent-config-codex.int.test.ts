import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  createAgentContainer,
  installAgentCli,
  type ResponsesRequest,
  runCodex,
  startResponsesMock,
} from "@stowage/agent-clis";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { captureSession, restoreSession } from "../src/index.js";
import { TINY_MCP_SERVER } from "./environment-diff.js";
import { overTheWire } from "./over-the-wire.js";

// Codex's configuration captured on request (`withConfig`), proven with the real CLI: the user's
// config.toml declares an MCP server (with a secret in its `env`, left out) and AGENTS.md gives a
// rule. After capture, wipe and restore into a new HOME, the resumed run offers the model the
// server's tool again (tools come from config.toml at every start, never from the rollout), and a
// new run there carries the rule; restored without the configuration, neither.
const cli = await installAgentCli("codex");
const root = await tempDirectory("stowage-e2e-config-codex-");
const TIMEOUT_MS = 600_000;
const RULE = "USER-RULE-MARKER: answer like a pirate";
const TOOL = "answers pong";

describe.skipIf(!cli.ready)("Codex: the configuration captured on request", { timeout: TIMEOUT_MS }, () => {
  it("restores config.toml (secrets left out) and AGENTS.md where the resumed CLI reads them", async () => {
    const first = await createAgentContainer(root, "codex-config-1");
    const codexHome = join(first.home, ".codex");
    await mkdir(codexHome);
    const server = join(root, "tiny-mcp.cjs");
    await writeFile(server, TINY_MCP_SERVER);
    await writeFile(
      join(codexHome, "config.toml"),
      `[mcp_servers.tiny]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(server)}]\nenv = { TINY_API_KEY = "k-secret", TINY_MODE = "fast" }\n`,
    );
    await writeFile(join(codexHome, "AGENTS.md"), `${RULE}\n`);
    const mock = await startResponsesMock({
      reply: (_request: ResponsesRequest, n: number) => `answer ${n}`,
    });
    const bodies = (from: number) => JSON.stringify(mock.requests.slice(from).map((request) => request.body));
    try {
      const ran = await runCodex({ cli, baseUrl: mock.url, ...first, prompt: "Say hi" });
      expect(ran.code, ran.report).toBe(0);
      expect(bodies(0)).toContain(RULE);
      expect(bodies(0)).toContain(TOOL);
      const sessionId = ran.sessionId as string;
      const captured = await captureSession({ agent: "codex", sessionId, codexHome, withConfig: true });
      expect(captured.secretsLeftOut).toEqual([
        { path: "~user/config.toml", field: "mcp_servers.tiny.env.TINY_API_KEY" },
      ]);
      const bare = await captureSession({ agent: "codex", sessionId, codexHome });
      const agentsBytes = await readFile(join(codexHome, "AGENTS.md"));
      await rm(first.home, { recursive: true });

      const second = await createAgentContainer(root, "codex-config-2");
      const restoredHome = join(second.home, ".codex");
      const restored = await restoreSession(overTheWire(captured), { codexHome: restoredHome });
      expect(restored.configuration?.written.sort()).toEqual(["~user/AGENTS.md", "~user/config.toml"]);
      expect(await readFile(join(restoredHome, "AGENTS.md"))).toEqual(agentsBytes);
      expect(await readFile(join(restoredHome, "config.toml"), "utf8")).not.toContain("k-secret");
      const control = await createAgentContainer(root, "codex-config-control");
      await restoreSession(overTheWire(bare), { codexHome: join(control.home, ".codex") });

      /** The requests `codex exec` sends in `home`: resuming the session, or a new one. */
      const run = async (home: string, resume: boolean) => {
        const before = mock.requests.length;
        const result = await runCodex({
          cli,
          baseUrl: mock.url,
          home,
          cwd: first.cwd,
          prompt: "Again",
          ...(resume ? { resume: sessionId } : {}),
        });
        expect(result.code, result.report).toBe(0);
        return bodies(before);
      };
      expect(await run(second.home, true)).toContain(TOOL);
      expect(await run(control.home, true)).not.toContain(TOOL);
      expect(await run(second.home, false)).toContain(RULE);
      expect(await run(control.home, false)).not.toContain(RULE);
    } finally {
      await mock.close();
    }
  });
});
