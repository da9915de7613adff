// What the real-client tests run is the README's client configuration itself: each snippet is a
// fenced block tagged with its name (```json claude-code-stowage-mcp), read from the README here,
// and its command (`stowage-mcp`, `stowage`) is found on PATH as an installed bin would be.
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type {
  ChatReply,
  ChatRequest,
  LoggedRequest,
  ResponsesReply,
  ResponsesRequest,
} from "@stowage/agent-clis";
import { nodeArgsFor } from "@stowage/test-support";

const README = new URL("../README.md", import.meta.url);

/** The body of the README block whose fence carries `tag` (```json <tag>). */
export async function readmeSnippet(tag: string): Promise<string> {
  const lines = (await readFile(README, "utf8")).split("\n");
  const start = lines.findIndex((line) => /^```\w+ /.test(line) && line.split(/\s+/).includes(tag));
  if (start === -1) throw new Error(`no README block tagged ${tag}`);
  const end = lines.findIndex((line, index) => index > start && line.startsWith("```"));
  return lines.slice(start + 1, end).join("\n");
}

/**
 * Puts `name` on a PATH of its own: a shell script that runs `script` (the path of a TypeScript
 * bin) compiled from source, as the published bin would run. Returns the PATH to give the agent CLI.
 */
export async function binOnPath(dir: string, name: string, script: string): Promise<string> {
  const bin = join(dir, "bin");
  await mkdir(bin, { recursive: true });
  const path = join(bin, name);
  const run = [process.execPath, ...nodeArgsFor(script)];
  await writeFile(path, `#!/bin/sh\nexec ${run.map((part) => `'${part}'`).join(" ")} "$@"\n`);
  await chmod(path, 0o755);
  return `${bin}:${process.env.PATH ?? ""}`;
}

/** A Responses mock's reply: `mcp__stowage`'s `read_artifact` with `args` once Codex offers it, then "got it". */
export function codexCallsReadArtifact(args: Record<string, unknown>) {
  return (request: ResponsesRequest): ResponsesReply => {
    if (JSON.stringify(request.input).includes("function_call_output")) return "got it";
    // Codex offers each MCP server's tools as the `namespace` tool `mcp__<server>`.
    const offered = JSON.stringify((request as { tools?: unknown }).tools ?? []);
    return offered.includes('"mcp__stowage"') && offered.includes('"read_artifact"')
      ? { functionCall: { namespace: "mcp__stowage", name: "read_artifact", arguments: args } }
      : "no stowage tool offered";
  };
}

/** The tool results Codex sent the model (`function_call_output` input items), in order. */
export function codexToolOutputs(requests: readonly LoggedRequest[]) {
  return requests.flatMap((request) =>
    (
      (request.body as { input?: { type?: string; call_id?: string; output?: unknown }[] } | undefined)
        ?.input ?? []
    ).filter((item) => item.type === "function_call_output"),
  );
}

/** A chat mock's reply: OpenCode's `stowage_read_artifact` with `args` once offered, then "got it". */
export function openCodeCallsReadArtifact(args: Record<string, unknown>) {
  return (request: ChatRequest): ChatReply => {
    if ((request.messages ?? []).some((message) => message.role === "tool")) return "got it";
    return (request.tools ?? []).some((tool) => tool.function?.name === "stowage_read_artifact")
      ? { toolCall: { name: "stowage_read_artifact", arguments: args } }
      : "no stowage tool offered";
  };
}

/** The tool results OpenCode sent the model (`tool` messages), in order. */
export function openCodeToolResults(requests: readonly LoggedRequest[]) {
  return requests.flatMap((request) =>
    (
      (request.body as { messages?: { role: string; content?: unknown }[] } | undefined)?.messages ?? []
    ).filter((message) => message.role === "tool"),
  );
}
