import { fileURLToPath } from "node:url";
import { nodeArgsFor } from "@stowage/test-support";

/** The `stowage-mcp` bin, run from its TypeScript source. */
export const STOWAGE_MCP_BIN = fileURLToPath(new URL("../src/bin/stowage-mcp.ts", import.meta.url));

/** The command line that starts `stowage-mcp` against the sources: what an MCP client config names. */
export function stowageMcpCommand(args: readonly string[]): { command: string; args: string[] } {
  return { command: process.execPath, args: [...nodeArgsFor(STOWAGE_MCP_BIN), ...args] };
}
