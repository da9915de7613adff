/** Where a path an agent run created or changed belongs: what a capture does with it. */
export type PathClass =
  /** The session's own state: captured and restored. */
  | "session"
  /** The user's or project's configuration the resumed run needs: captured only on request. */
  | "config"
  /** This machine's: never captured (rebuilt by the next run, or meaningless elsewhere). */
  | "machine-local"
  /** The task's own output in the working directory: the user's files, which their repository carries. */
  | "work";

/** One row of an agent's classification table. */
export interface PathRule {
  /** Matched against `home/<path>` or `cwd/<path>`; upper-case placeholders stand for the session's ids. */
  pattern: string;
  class: PathClass;
  why: string;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The first rule `path` matches, its placeholders (`KEY`, `SID`, …) replaced by `ids`. */
export function classifyPath(
  rules: readonly PathRule[],
  path: string,
  ids: Record<string, string>,
): PathRule | undefined {
  return rules.find((rule) => {
    let source = rule.pattern;
    for (const [name, value] of Object.entries(ids)) source = source.replaceAll(name, escapeRegExp(value));
    return new RegExp(`^${source}$`).test(path);
  });
}

/** Paths created or changed between two `snapshotDirectory` snapshots, each prefixed with `prefix`. */
export function changedPaths(before: Record<string, string>, after: Record<string, string>, prefix: string) {
  return Object.keys(after)
    .filter((path) => before[path] !== after[path])
    .map((path) => ({ path: `${prefix}${path}`, kind: after[path]! }));
}

/**
 * Paths of a diff no rule classifies; a directory is covered by the classified files under it,
 * an empty one needs a row of its own.
 */
export function unclassifiedPaths(
  diff: readonly { path: string; kind: string; rule: PathRule | undefined }[],
) {
  return diff
    .filter(
      (entry) =>
        entry.rule === undefined &&
        !(
          entry.kind === "dir" && diff.some((other) => other.path.startsWith(`${entry.path}/`) && other.rule)
        ),
    )
    .map((entry) => entry.path);
}

/** The table a test prints: one line per classified path, with its class and why. */
export function classificationTable(
  title: string,
  diff: readonly { path: string; rule: PathRule | undefined }[],
): string {
  const rows = diff
    .filter((entry) => entry.rule)
    .map((entry) => `${entry.rule!.class.padEnd(13)} ${entry.path}  (${entry.rule!.why})`);
  return `${title}\n${rows.join("\n")}`;
}

/** A stdio MCP server in a few lines of CommonJS: `initialize`, one `ping` tool. */
export const TINY_MCP_SERVER = `
const lines = require("node:readline").createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  const reply = (result) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }) + "\\n");
  if (message.method === "initialize")
    reply({ protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "tiny", version: "1.0.0" } });
  else if (message.method === "tools/list")
    reply({ tools: [{ name: "ping", description: "answers pong", inputSchema: { type: "object", properties: {} } }] });
  else if (message.method === "tools/call") reply({ content: [{ type: "text", text: "pong from tiny" }] });
  else process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "unknown" } }) + "\\n");
});`;
