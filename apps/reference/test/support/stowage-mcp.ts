import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Tenant } from "@stowage/tenancy";
import { nodeArgsFor } from "@stowage/test-support";
import { textItem } from "@stowage/thread-items";

/** The `stowage` bin, from its TypeScript source. */
export const STOWAGE_BIN = fileURLToPath(new URL("../../src/bin.ts", import.meta.url));

/**
 * One session of `tenant` with something of every kind `stowage mcp` serves: an artifact, a JSON
 * agent output, a PNG blob, a thread item, a content ref and a hot state; registered, so that
 * uploads into it are accepted.
 */
export async function seedMcpSession(
  tenant: Pick<
    Tenant,
    "agentSessions" | "blobs" | "threads" | "owner" | "registry" | "hotState" | "registeredSessions"
  >,
  sessionId: string,
  png: Uint8Array,
) {
  const session = await tenant.agentSessions.create(sessionId);
  await session.artifacts.saveArtifact("bash", "npm test\n42 passing\n");
  await session.artifacts.writeAgentOutput(
    "0-Report",
    JSON.stringify({ findings: [{ file: "src/app.ts", line: 7 }] }),
  );
  const blob = await tenant.blobs.put(png);
  await tenant.threads.post({ jobId: sessionId, alias: "main" }, textItem("run started"), {
    author: tenant.owner,
  });
  const { record } = await tenant.registry.storeText("# Plan\nship it\n", { type: "plan" });
  const dispatcher = tenant.hotState.dispatcherFor(sessionId);
  await dispatcher.load();
  await dispatcher.write({ session_id: sessionId, objective: "make the tests pass" });
  await tenant.registeredSessions.register(sessionId);
  return { session, blobRef: blob.ref, contentRef: record.artifact_id };
}

/** An SDK client of `stowage <args>` started as a child process (stdio), as an agent's MCP client starts it. */
export async function connectStowageMcp(
  args: readonly string[],
  options: { cwd: string; env: Record<string, string> },
): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...nodeArgsFor(STOWAGE_BIN), "mcp", ...args],
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...options.env },
    cwd: options.cwd,
    stderr: "pipe",
  });
  const client = new Client({ name: "cli-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}
