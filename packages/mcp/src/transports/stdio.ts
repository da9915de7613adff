import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createStowageMcpServer, type StowageMcpServer } from "../server/create-server.js";
import type { StowageMcpServerOptions } from "../server/options.js";

/** Options of `runStdioServer`: the server's, plus the streams (default the process's stdin and stdout). */
export interface StdioServerOptions extends StowageMcpServerOptions {
  stdin?: NodeJS.ReadableStream;
  stdout?: NodeJS.WritableStream;
}

/**
 * Serves one session over stdio (what `.mcp.json`, Codex's `[mcp_servers]` and OpenCode's `mcp`
 * start). Resolves with the server once it is listening; `closed` resolves when the client goes.
 * Log to stderr only: stdout carries the protocol.
 */
export async function runStdioServer(
  options: StdioServerOptions,
): Promise<StowageMcpServer & { closed: Promise<void> }> {
  const { stdin, stdout, ...serverOptions } = options;
  const mcp = createStowageMcpServer(serverOptions);
  const transport = new StdioServerTransport(
    stdin as ConstructorParameters<typeof StdioServerTransport>[0],
    stdout as ConstructorParameters<typeof StdioServerTransport>[1],
  );
  const closed = new Promise<void>((resolve) => {
    const previous = mcp.server.onclose;
    mcp.server.onclose = () => {
      previous?.();
      resolve();
    };
  });
  await mcp.connect(transport);
  // The client closing stdin is the end of the session.
  (stdin ?? process.stdin).once("end", () => void mcp.close());
  return { ...mcp, closed };
}
