import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

/** tsx's loader, resolved from the repository root (where tsx is a devDependency). */
export const TSX_LOADER = pathToFileURL(
  createRequire(new URL("../../../package.json", import.meta.url)).resolve("tsx"),
).href;

/** The `stowage-mcp` bin, run from its TypeScript source. */
export const STOWAGE_MCP_BIN = fileURLToPath(new URL("../src/bin/stowage-mcp.ts", import.meta.url));

/** The command line that starts `stowage-mcp` against the sources: what an MCP client config names. */
export function stowageMcpCommand(args: readonly string[]): { command: string; args: string[] } {
  return {
    command: process.execPath,
    args: ["--import", TSX_LOADER, "--conditions=@stowage/source", STOWAGE_MCP_BIN, ...args],
  };
}
