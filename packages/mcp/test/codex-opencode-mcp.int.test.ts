import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  createAgentContainer,
  installAgentCli,
  runCodex,
  runOpenCode,
  startChatMock,
  startResponsesMock,
} from "@stowage/agent-clis";
import { createSessionFiles } from "@stowage/artifacts";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it, onTestFinished } from "vitest";
import {
  binOnPath,
  codexCallsReadArtifact,
  codexToolOutputs,
  openCodeCallsReadArtifact,
  openCodeToolResults,
  readmeSnippet,
} from "./readme-clients.js";
import { STOWAGE_MCP_BIN } from "./stdio-command.js";

// Codex and OpenCode configured with the README's snippets (config.toml `[mcp_servers]`,
// opencode.json `mcp`), `stowage-mcp` on PATH. The mock model calls read_artifact when it is
// offered; the next model request must carry the tool's result. Codex 0.169.0 waits for an MCP
// server before its first model request only when the entry says `required = true`.
const codex = await installAgentCli("codex");
const opencode = await installAgentCli("opencode");
const root = await tempDirectory("stowage-mcp-clis-");
/** The session id the README's snippets name. */
const SESSION_ID = "0b6f4e0a-9f0c-4d35-8a1e-2f4f1c1b7a11";
const SECRET = "the release tag is OSPREY-17";

/** The snippet's `./sessions` in the project directory, with one artifact. */
async function sessionIn(cwd: string): Promise<void> {
  const session = await createSessionFiles({ dir: join(cwd, "sessions") }).create(SESSION_ID);
  await session.artifacts.saveArtifact("bash", `$ git describe\n${SECRET}\n`);
}

describe.skipIf(!codex.ready)("Codex with stowage-mcp in config.toml", () => {
  it("calls read_artifact and sends its result back to the model", async () => {
    const { home, cwd } = await createAgentContainer(root, "codex");
    await sessionIn(cwd);
    const mock = await startResponsesMock({ reply: codexCallsReadArtifact({ id: 0 }) });
    onTestFinished(() => mock.close());
    await mkdir(join(home, ".codex"), { recursive: true });
    await writeFile(join(home, ".codex", "config.toml"), await readmeSnippet("codex-stowage-mcp"));
    const run = await runCodex({
      cli: codex,
      baseUrl: mock.url,
      home,
      cwd,
      prompt: "What is the release tag in artifact://0?",
      env: { PATH: await binOnPath(root, "stowage-mcp", STOWAGE_MCP_BIN) },
    });
    expect(run.code, run.report).toBe(0);
    const outputs = codexToolOutputs(mock.requests);
    expect(outputs.length, "the tool's result went back to the model").toBeGreaterThan(0);
    expect(outputs[0]!.call_id).toBe("call_mock_0");
    expect(JSON.stringify(outputs[0]!.output)).toContain(SECRET);
    expect(run.stdout).toContain("got it");
  });
});

describe.skipIf(!opencode.ready)("OpenCode with stowage-mcp in opencode.json", () => {
  it("calls read_artifact and sends its result back to the model", async () => {
    const { home, cwd } = await createAgentContainer(root, "opencode");
    await sessionIn(cwd);
    const mock = await startChatMock({ reply: openCodeCallsReadArtifact({ id: 0 }) });
    onTestFinished(() => mock.close());
    // The runner writes the project's opencode.json (the mock provider); the user's holds the server.
    await mkdir(join(home, ".config", "opencode"), { recursive: true });
    await writeFile(
      join(home, ".config", "opencode", "opencode.json"),
      await readmeSnippet("opencode-stowage-mcp"),
    );
    // An OpenCode run takes 7–9 s on an idle machine, far more on a busy one.
    const run = await runOpenCode({
      cli: opencode,
      baseUrl: mock.url,
      home,
      cwd,
      prompt: "What is the release tag in artifact://0?",
      env: { PATH: await binOnPath(root, "stowage-mcp", STOWAGE_MCP_BIN) },
    });
    expect(run.code, run.report).toBe(0);
    const results = openCodeToolResults(mock.requests);
    expect(results.length, "the tool's result went back to the model").toBeGreaterThan(0);
    expect(JSON.stringify(results[0]!.content)).toContain(SECRET);
  }, 150_000);
});
