import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createAgentContainer, installAgentCli, runClaude, startAnthropicMock } from "@stowage/agent-clis";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { captureSession, restoreSession } from "../src/index.js";
import { TINY_MCP_SERVER } from "./environment-diff.js";
import { overTheWire } from "./over-the-wire.js";

// What Claude Code keeps outside the config directory's captured paths, captured on request and
// proven with the real CLI: the user-scope and local-scope MCP servers of ~/.claude.json
// (`withConfig`: just those entries, a secret `env` entry left out) and the project's auto-memory
// (`withMemory`: projects/<key>/memory/). After capture, wipe and restore into a new HOME, the
// resumed run offers the model both servers' tools and carries the memory; restored without
// them, the resumed CLI tells the model both are gone.
const cli = await installAgentCli("claude-code");
const root = await tempDirectory("stowage-e2e-config-claude-");
const TIMEOUT_MS = 600_000;
const MEMORY = "MEMORY-MARKER: the build uses bazel";
const TOOLS = ["mcp__usertiny__ping", "mcp__localtiny__ping"];

describe.skipIf(!cli.ready)(
  "Claude Code: ~/.claude.json's MCP servers and the project's memory",
  { timeout: TIMEOUT_MS },
  () => {
    it("restores them where the resumed CLI reads them", async () => {
      const first = await createAgentContainer(root, "claude-config-1");
      const server = join(root, "tiny-mcp.cjs");
      await writeFile(server, TINY_MCP_SERVER);
      const tiny = { type: "stdio", command: process.execPath, args: [server] };
      await writeFile(
        join(first.home, ".claude.json"),
        JSON.stringify({
          mcpServers: { usertiny: { ...tiny, env: { USER_TOKEN: "u-secret", MODE: "fast" } } },
          projects: { [first.cwd]: { mcpServers: { localtiny: tiny } } },
        }),
      );
      const key = first.cwd.replace(/[^A-Za-z0-9]/g, "-");
      const memoryDir = join(first.home, ".claude", "projects", key, "memory");
      await mkdir(memoryDir, { recursive: true });
      await writeFile(join(memoryDir, "MEMORY.md"), `${MEMORY}\n`);
      const mock = await startAnthropicMock({ reply: (_request, n) => ({ text: `answer ${n}` }) });
      const bodies = (from: number) =>
        JSON.stringify(mock.requests.slice(from).map((request) => request.body));
      const run = async (home: string, resume?: string) => {
        const before = mock.requests.length;
        const result = await runClaude({
          cli,
          baseUrl: mock.url,
          home,
          cwd: first.cwd,
          prompt: resume ? "Again" : "Say hi",
          ...(resume ? { resume } : {}),
        });
        expect(result.code, result.report).toBe(0);
        return { sessionId: result.sessionId as string, sent: bodies(before) };
      };
      try {
        const ran = await run(first.home);
        for (const tool of TOOLS) expect(ran.sent).toContain(tool);
        expect(ran.sent).toContain(MEMORY);
        const { sessionId } = ran;
        const configDir = join(first.home, ".claude");
        const captured = await captureSession({
          sessionId,
          configDir,
          cwd: first.cwd,
          withConfig: true,
          withMemory: true,
        });
        expect(captured.secretsLeftOut).toContainEqual({
          path: "~claude.json/mcpServers.json",
          field: "mcpServers.usertiny.env.USER_TOKEN",
        });
        const paths = captured.manifest.files.map((file) => file.path);
        expect(paths).toContain("~claude.json/mcpServers.json");
        expect(paths).toContain("~project-dir/memory/MEMORY.md");
        const bare = await captureSession({ sessionId, configDir, cwd: first.cwd });
        const memoryBytes = await readFile(join(memoryDir, "MEMORY.md"));
        await rm(first.home, { recursive: true });

        const second = await createAgentContainer(root, "claude-config-2");
        const restored = await restoreSession(overTheWire(captured), {
          configDir: join(second.home, ".claude"),
          cwd: first.cwd,
        });
        expect(restored.configuration?.written).toEqual(
          expect.arrayContaining([
            "~claude.json/mcpServers.json#mcpServers.usertiny",
            `~claude.json/mcpServers.json#projects.${first.cwd}.mcpServers.localtiny`,
            "~project-dir/memory/MEMORY.md",
          ]),
        );
        expect(await readFile(join(second.home, ".claude", "projects", key, "memory", "MEMORY.md"))).toEqual(
          memoryBytes,
        );
        expect(await readFile(join(second.home, ".claude.json"), "utf8")).not.toContain("u-secret");
        const control = await createAgentContainer(root, "claude-config-control");
        await restoreSession(overTheWire(bare), { configDir: join(control.home, ".claude"), cwd: first.cwd });

        // The resumed CLI compares the tools it has now with those the transcript says it had:
        // restored, none is missing; without, it tells the model they are gone. The memory is read
        // again from the new HOME (a new path): restored, its contents are sent under that path.
        const TOOLS_GONE = "The following deferred tools are no longer available";
        const memoryAt = (home: string) =>
          `Contents of ${join(home, ".claude", "projects", key, "memory", "MEMORY.md")}`;
        const resumed = await run(second.home, sessionId);
        for (const tool of TOOLS) expect(resumed.sent).toContain(tool);
        expect(resumed.sent).not.toContain(TOOLS_GONE);
        expect(resumed.sent).toContain(memoryAt(second.home));
        const without = await run(control.home, sessionId);
        expect(without.sent).toContain("Say hi");
        expect(without.sent).toContain(TOOLS_GONE);
        expect(without.sent).not.toContain(memoryAt(control.home));
      } finally {
        await mock.close();
      }
    });
  },
);
