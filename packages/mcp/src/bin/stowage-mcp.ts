#!/usr/bin/env node
import { parseArgs } from "node:util";
import { createArtifactStore, createInternalUrlRouter, createSessionFiles } from "@stowage/artifacts";
import { StowageError } from "@stowage/core";
import type { McpSession } from "../server/options.js";
import { PACKAGE_VERSION } from "../server/version.js";
import { runStdioServer } from "../transports/stdio.js";

const USAGE = `usage: stowage-mcp --sessions-dir <dir> --session <id>
       stowage-mcp --session-file <…/<timestamp>_<sessionId>.jsonl>
       stowage-mcp --version

Serves one agent session's artifacts (artifact://, agent://) over MCP on stdin/stdout.
The reference app's \`stowage mcp --session <id>\` serves blobs, threads and content refs too.`;

async function openSession(values: {
  "sessions-dir"?: string;
  session?: string;
  "session-file"?: string;
}): Promise<McpSession> {
  if (values["session-file"] !== undefined) {
    const sessionFile = values["session-file"];
    const artifacts = createArtifactStore({ sessionFile });
    const name = sessionFile.split("/").pop() ?? "";
    return {
      sessionId: name.slice(name.indexOf("_") + 1).replace(/\.jsonl$/, ""),
      artifacts,
      router: createInternalUrlRouter({ artifacts }),
    };
  }
  if (values["sessions-dir"] !== undefined && values.session !== undefined) {
    return createSessionFiles({ dir: values["sessions-dir"] }).get(values.session);
  }
  throw new StowageError("INVALID_INPUT", USAGE, { reason: "USAGE" });
}

try {
  const { values } = parseArgs({
    options: {
      "sessions-dir": { type: "string" },
      session: { type: "string" },
      "session-file": { type: "string" },
      help: { type: "boolean", short: "h" },
      version: { type: "boolean", short: "V" },
    },
    strict: true,
  });
  if (values.help) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(0);
  }
  if (values.version) {
    process.stdout.write(`${PACKAGE_VERSION}\n`);
    process.exit(0);
  }
  const session = await openSession(values);
  const server = await runStdioServer({ session });
  await server.closed;
} catch (err) {
  // A wrong command line (node's parseArgs) gets the usage too.
  const usage =
    (err as { code?: unknown } | null)?.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" ? `\n${USAGE}` : "";
  process.stderr.write(
    `stowage-mcp: ${StowageError.is(err) ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err)}${usage}\n`,
  );
  process.exit(2);
}
