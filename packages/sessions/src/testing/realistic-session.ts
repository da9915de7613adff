import { seededRandom } from "@stowage/core/testing";
import type { SessionStoreEntry } from "../session-store/types.js";
import { seededBase64, seededUuid } from "./seeded-random.js";

/**
 * Generates Claude Code session trees shaped like real ones: a main transcript whose lines carry
 * `uuid`/`parentUuid`/`sessionId`/`cwd`/`timestamp`/`version`, assistant turns with thinking
 * (signed), tool_use for Read/Bash/Edit/Grep, tool results repeated in `toolUseResult` as the CLI
 * writes them, occasional base64 screenshots, summaries and file-history snapshots; subagent
 * transcripts with their `.meta.json` in the companion directory, large tool outputs in
 * `tool-results/`, and legacy `agent-*.jsonl` files beside the main transcript.
 */

const PROSE =
  `I will look at the failing test first and then check how the fixture is loaded. The error says the module cannot be resolved, which usually means the import path is wrong or the build output is stale. Let me read the configuration and the test setup, then run the suite again with verbose output so we can see which case fails. The handler validates the request body before it touches the database, so the bug must be in the parser. After the change the suite passes locally; I also ran the type checker and the linter. Next I will update the changelog and open a pull request with a short description of the fix and the reason for it.`.split(
    " ",
  );
const IDENTIFIERS = [
  "session",
  "request",
  "handler",
  "store",
  "cache",
  "user",
  "token",
  "config",
  "result",
  "payload",
  "entry",
  "record",
  "client",
  "stream",
  "buffer",
  "options",
  "context",
  "logger",
  "router",
  "schema",
];
const VERBS = ["load", "save", "parse", "build", "create", "update", "resolve", "fetch", "apply", "check"];
const TYPES = ["string", "number", "boolean", "Uint8Array", "Record<string, unknown>", "Date", "string[]"];
const FILES = [
  "src/server.ts",
  "src/routes/sessions.ts",
  "src/db/schema.ts",
  "src/lib/parse-request.ts",
  "src/lib/cache.ts",
  "test/sessions.test.ts",
  "package.json",
  "src/workers/queue-consumer.ts",
];

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function prose(random: () => number, words: number): string {
  const start = Math.floor(random() * PROSE.length);
  return Array.from({ length: words }, (_, i) => PROSE[(start + i) % PROSE.length]).join(" ");
}

function camel(random: () => number): string {
  const noun = pick(random, IDENTIFIERS);
  return pick(random, VERBS) + noun[0]!.toUpperCase() + noun.slice(1);
}

function codeFile(random: () => number, lines: number): string {
  const out: string[] = [
    `import { ${camel(random)}, ${camel(random)} } from "./${pick(random, IDENTIFIERS)}.js";`,
    "",
  ];
  while (out.length < lines) {
    const name = camel(random);
    const arg = pick(random, IDENTIFIERS);
    out.push(`export async function ${name}(${arg}: ${pick(random, TYPES)}, options: Options = {}) {`);
    out.push(`  const ${pick(random, IDENTIFIERS)} = await ${camel(random)}(${arg}, options);`);
    out.push(`  if (!${arg}) throw new Error("${prose(random, 5)}");`);
    out.push(`  // ${prose(random, 9)}`);
    out.push(`  return { ${pick(random, IDENTIFIERS)}: ${arg}, at: Date.now() };`);
    out.push("}", "");
  }
  return out.slice(0, lines).join("\n");
}

function numbered(text: string): string {
  return text
    .split("\n")
    .map((line, i) => `${String(i + 1).padStart(6)}→${line}`)
    .join("\n");
}

function testLog(random: () => number, lines: number): string {
  const out = ["", "> app@1.4.2 test", "> vitest run", "", " RUN  v4.1.12 /workspace/app", ""];
  while (out.length < lines) {
    const file = pick(random, FILES);
    const ok = random() > 0.08;
    out.push(
      ` ${ok ? "✓" : "×"} ${file} > ${prose(random, 6)} ${Math.floor(random() * 90)}ms`,
      ...(ok ? [] : [`   → expected ${camel(random)} to equal ${pick(random, IDENTIFIERS)}`]),
    );
  }
  return out.join("\n");
}

export interface RealisticSessionOptions {
  sessionId: string;
  cwd: string;
  /** Rough size of the main transcript in bytes; generation stops once it is passed. */
  mainBytes: number;
  /** Subagent transcripts in the companion directory (`subagents/`). Default 2. */
  subagents?: number;
  /** Bytes per subagent transcript. Default `mainBytes / 8`. */
  subagentBytes?: number;
  /** Files in `tool-results/`. Default 2. */
  toolResults?: number;
  /** Legacy `agent-*.jsonl` files beside the main transcript (Claude Code before 2.1.2). Default 1. */
  legacyAgents?: number;
  /** One screenshot every this many turns; 0 for none. Default 60. */
  screenshotEvery?: number;
  seed?: number;
}

/** Relative path (from the project directory) → file content. */
export type SessionTreeFiles = Map<string, string>;

interface TranscriptOptions {
  sessionId: string;
  cwd: string;
  bytes: number;
  isSidechain: boolean;
  agentId?: string;
  screenshotEvery: number;
  random: () => number;
}

type Tool = "Read" | "Bash" | "Edit" | "Grep";

/** A tool call's input as the CLI records it. */
function toolInput(random: () => number, tool: Tool, file: string, cwd: string): Record<string, string> {
  if (tool === "Read") return { file_path: file };
  if (tool === "Bash")
    return { command: "npm test -- --reporter=verbose", description: "Run the test suite" };
  if (tool === "Edit")
    return { file_path: file, old_string: codeFile(random, 4), new_string: codeFile(random, 5) };
  return { pattern: camel(random), path: cwd, output_mode: "content" };
}

/** An assistant turn: signed thinking, a line of text and one tool call. */
function assistantTurn(
  random: () => number,
  turn: number,
  toolUse: { id: string; name: Tool; input: Record<string, string> },
): Record<string, unknown> {
  return {
    type: "assistant",
    requestId: `req_011C${seededBase64(random, 12).replace(/[^A-Za-z0-9]/g, "")}`,
    message: {
      id: `msg_01${seededBase64(random, 12).replace(/[^A-Za-z0-9]/g, "")}`,
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5-20250929",
      content: [
        // Signatures are opaque and incompressible; real ones run to hundreds of characters.
        {
          type: "thinking",
          thinking: prose(random, 30 + Math.floor(random() * 60)),
          signature: seededBase64(random, 240 + Math.floor(random() * 300)),
        },
        { type: "text", text: prose(random, 10 + Math.floor(random() * 30)) },
        { type: "tool_use", ...toolUse },
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: {
        input_tokens: 4,
        cache_creation_input_tokens: Math.floor(random() * 4000),
        cache_read_input_tokens: 20_000 + turn * 310,
        output_tokens: 80 + Math.floor(random() * 600),
        service_tier: "standard",
      },
    },
  };
}

/** What a tool call printed, and the `toolUseResult` the CLI repeats it in. */
function toolOutput(
  random: () => number,
  tool: Tool,
  file: string,
  input: Record<string, string>,
): { output: string; toolUseResult: unknown } {
  if (tool === "Read") {
    const content = codeFile(random, 40 + Math.floor(random() * 160));
    const toolUseResult = {
      type: "text",
      file: { filePath: file, content, numLines: content.split("\n").length, startLine: 1, totalLines: 400 },
    };
    return { output: numbered(content), toolUseResult };
  }
  if (tool === "Bash") {
    const output = testLog(random, 20 + Math.floor(random() * 120));
    return { output, toolUseResult: { stdout: output, stderr: "", interrupted: false, isImage: false } };
  }
  if (tool === "Edit") {
    const output = `The file ${file} has been updated. Here's the result of running \`cat -n\` on a snippet:\n${numbered(codeFile(random, 12))}`;
    const toolUseResult = {
      filePath: file,
      oldString: input.old_string,
      newString: input.new_string,
      structuredPatch: [
        { oldStart: 10, oldLines: 4, newStart: 10, newLines: 5, lines: codeFile(random, 9).split("\n") },
      ],
      userModified: false,
    };
    return { output, toolUseResult };
  }
  const output = Array.from(
    { length: 5 + Math.floor(random() * 30) },
    () => `${pick(random, FILES)}:${Math.floor(random() * 300)}:  const x = ${camel(random)}();`,
  ).join("\n");
  const toolUseResult = {
    mode: "content",
    numFiles: 3,
    filenames: [],
    content: output,
    numLines: output.split("\n").length,
  };
  return { output, toolUseResult };
}

/** The user line that carries a tool call's result back, with a screenshot in it when asked. */
function toolResultTurn(
  random: () => number,
  toolUseId: string,
  { output, toolUseResult }: { output: string; toolUseResult: unknown },
  screenshot: boolean,
): Record<string, unknown> {
  const image = () => ({
    type: "image",
    source: {
      type: "base64",
      media_type: "image/png",
      data: seededBase64(random, 40_000 + Math.floor(random() * 80_000)),
    },
  });
  return {
    type: "user",
    message: {
      role: "user",
      content: [
        {
          tool_use_id: toolUseId,
          type: "tool_result",
          content: screenshot ? [{ type: "text", text: output.slice(0, 200) }, image()] : output,
          is_error: false,
        },
      ],
    },
    toolUseResult,
  };
}

function transcript(options: TranscriptOptions): string {
  const { random, sessionId, cwd, isSidechain } = options;
  const lines: string[] = [];
  let size = 0;
  let parentUuid: string | null = null;
  let clock = Date.UTC(2026, 10, 21, 9, 0, 0);
  let turn = 0;
  const push = (record: Record<string, unknown>) => {
    const uuid = seededUuid(random);
    clock += 400 + Math.floor(random() * 4000);
    const line = JSON.stringify({
      parentUuid,
      isSidechain,
      userType: "external",
      cwd,
      sessionId,
      version: "2.1.5",
      gitBranch: "fix/session-restore",
      ...(options.agentId ? { agentId: options.agentId } : {}),
      ...record,
      uuid,
      timestamp: new Date(clock).toISOString(),
    });
    parentUuid = uuid;
    lines.push(line);
    size += line.length + 1;
  };
  if (!isSidechain) {
    lines.push(
      JSON.stringify({
        type: "file-history-snapshot",
        messageId: seededUuid(random),
        snapshot: { trackedFileBackups: {}, timestamp: new Date(clock).toISOString() },
        isSnapshotUpdate: false,
      }),
    );
  }
  push({ type: "user", message: { role: "user", content: prose(random, 40) } });
  while (size < options.bytes) {
    turn++;
    const toolUseId = `toolu_01${seededBase64(random, 16)
      .replace(/[^A-Za-z0-9]/g, "")
      .slice(0, 22)}`;
    const tool = pick(random, ["Read", "Bash", "Edit", "Grep", "Read", "Bash"] as const);
    const file = `${cwd}/${pick(random, FILES)}`;
    const input = toolInput(random, tool, file, cwd);
    push(assistantTurn(random, turn, { id: toolUseId, name: tool, input }));
    const result = toolOutput(random, tool, file, input);
    const screenshot = options.screenshotEvery > 0 && turn % options.screenshotEvery === 0;
    push(toolResultTurn(random, toolUseId, result, screenshot));
    if (turn % 25 === 0)
      push({
        type: "system",
        subtype: "turn_duration",
        durationMs: Math.floor(random() * 90_000),
        isMeta: false,
      });
    if (turn % 40 === 0) push({ type: "user", message: { role: "user", content: prose(random, 25) } });
  }
  push({
    type: "assistant",
    message: { role: "assistant", content: [{ type: "text", text: prose(random, 60) }] },
  });
  if (!isSidechain)
    lines.push(JSON.stringify({ type: "summary", summary: prose(random, 8), leafUuid: parentUuid }));
  return `${lines.join("\n")}\n`;
}

/** The files of one realistic session, keyed by their path relative to the project directory. */
export function realisticSessionTree(options: RealisticSessionOptions): SessionTreeFiles {
  const random = seededRandom(options.seed ?? 42);
  const screenshotEvery = options.screenshotEvery ?? 60;
  const subagentBytes = options.subagentBytes ?? Math.floor(options.mainBytes / 8);
  const files: SessionTreeFiles = new Map();
  const { sessionId, cwd } = options;
  files.set(
    `${sessionId}.jsonl`,
    transcript({ sessionId, cwd, bytes: options.mainBytes, isSidechain: false, screenshotEvery, random }),
  );
  for (let i = 0; i < (options.subagents ?? 2); i++) {
    const agentId = seededBase64(random, 6)
      .replace(/[^A-Za-z0-9]/g, "a")
      .slice(0, 7)
      .toLowerCase();
    const dir = `${sessionId}/subagents`;
    files.set(
      `${dir}/agent-${agentId}.jsonl`,
      transcript({
        sessionId,
        cwd,
        bytes: subagentBytes,
        isSidechain: true,
        agentId,
        screenshotEvery: 0,
        random,
      }),
    );
    files.set(
      `${dir}/agent-${agentId}.meta.json`,
      `${JSON.stringify({ agentId, agentType: "general-purpose", description: prose(random, 6) })}\n`,
    );
  }
  for (let i = 0; i < (options.toolResults ?? 2); i++) {
    const id = `toolu_01${seededBase64(random, 16)
      .replace(/[^A-Za-z0-9]/g, "")
      .slice(0, 22)}`;
    files.set(`${sessionId}/tool-results/${id}.txt`, testLog(random, 2000));
  }
  for (let i = 0; i < (options.legacyAgents ?? 1); i++) {
    const agentId = seededBase64(random, 4)
      .replace(/[^A-Za-z0-9]/g, "b")
      .slice(0, 8)
      .toLowerCase();
    files.set(
      `agent-${agentId}.jsonl`,
      transcript({
        sessionId,
        cwd,
        bytes: Math.min(subagentBytes, 64 * 1024),
        isSidechain: true,
        agentId,
        screenshotEvery: 0,
        random,
      }),
    );
  }
  return files;
}

/**
 * The main transcript of a realistic session (no subagents, tool-result files, legacy agents or
 * screenshots) as the entries a SessionStore is given, `mainBytes` of JSONL (default 4 MB, about
 * 850 lines): what the SessionStore benchmarks append, with fresh uuids.
 */
export function realisticTranscriptEntries(sessionId: string, mainBytes = 4_000_000): SessionStoreEntry[] {
  const files = realisticSessionTree({
    sessionId,
    cwd: "/workspace/app",
    mainBytes,
    subagents: 0,
    toolResults: 0,
    legacyAgents: 0,
    screenshotEvery: 0,
  });
  return files
    .get(`${sessionId}.jsonl`)!
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as SessionStoreEntry);
}
