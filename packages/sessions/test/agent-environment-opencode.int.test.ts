import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type AgentContainer,
  type ChatReply,
  type ChatRequest,
  createAgentContainer,
  installAgentCli,
  openCodeEnv,
  runOpenCode,
  startChatMock,
} from "@stowage/agent-clis";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { captureSession, type OpencodeCliOptions, readSessionFiles, restoreSession } from "../src/index.js";
import { snapshotDirectory } from "./dir-snapshot.js";
import {
  changedPaths,
  classificationTable,
  classifyPath,
  type PathRule,
  TINY_MCP_SERVER,
  unclassifiedPaths,
} from "./environment-diff.js";
import { overTheWire } from "./over-the-wire.js";

// OpenCode's whole environment, found from the CLI itself (see agent-environment.int.test.ts for
// Claude Code): a real `opencode run` that writes a todo list, writes and edits a file, runs a
// shell command, hands a task to a subagent and calls an MCP server from the user's config, its
// HOME and working directory diffed before and after; every path must be classified. OpenCode
// 1.18 keeps all of a session in one SQLite database every session shares, so the session is
// captured through the CLI's own export, never as files: what that export carries is checked too.
const cli = await installAgentCli("opencode");
const root = await tempDirectory("stowage-e2e-environment-opencode-");

/** OpenCode 1.18.33, as the run below found it (paths below HOME and the working directory). */
const OPENCODE_PATHS: readonly PathRule[] = [
  {
    pattern: "home/.local/share/opencode/opencode\\.db(-shm|-wal)?",
    class: "session",
    why: "the database of every session (SQLite, WAL): the session and its subagents' child sessions are captured through `opencode export`, never the file; its todo rows are in no export",
  },
  { pattern: "home/.local/share/opencode/log(/.+)?", class: "machine-local", why: "logs" },
  {
    pattern: "home/.local/share/opencode/repos",
    class: "machine-local",
    why: "a cache of repositories (empty)",
  },
  { pattern: "home/.local/state/opencode(/.+)?", class: "machine-local", why: "locks of running processes" },
  {
    pattern: "home/.cache/opencode(/.+)?",
    class: "machine-local",
    why: "caches: provider packages installed from npm, binaries",
  },
  {
    pattern: "home/.config/opencode/(opencode\\.json|\\.gitignore)",
    class: "config",
    why: "the user's configuration (here its MCP server; OpenCode adds `$schema` and a .gitignore)",
  },
  {
    pattern: "home/tmp(/.+)?",
    class: "machine-local",
    why: "the container's temp directory (a native library)",
  },
  {
    pattern: "cwd/opencode\\.json",
    class: "config",
    why: "the project's configuration (here the mock provider)",
  },
  { pattern: "cwd/(hello|bash)\\.txt", class: "work", why: "the task's output: the user's files" },
];

/** Real CLI runs take several seconds each (OpenCode starts slowly), many more on a loaded machine. */
const TIMEOUT_MS = 600_000;

function opencodeIn(container: AgentContainer): OpencodeCliOptions {
  if (!cli.ready) throw new Error(cli.reason);
  return { bin: cli.command, env: openCodeEnv(container.home), cwd: container.cwd };
}

describe.skipIf(!cli.ready)("OpenCode: the session's whole environment", { timeout: TIMEOUT_MS }, () => {
  it("classifies every path, captures the session through its export, restores it and resumes", async () => {
    const first = await createAgentContainer(root, "opencode-1");
    const hello = join(first.cwd, "hello.txt");
    await writeFile(join(first.cwd, "tiny-mcp.cjs"), TINY_MCP_SERVER);
    await mkdir(join(first.home, ".config", "opencode"), { recursive: true });
    const userConfig = JSON.stringify({
      mcp: { tiny: { type: "local", command: [process.execPath, join(first.cwd, "tiny-mcp.cjs")] } },
    });
    await writeFile(join(first.home, ".config", "opencode", "opencode.json"), userConfig);
    const calls = [
      {
        id: "call_todo",
        name: "todowrite",
        arguments: {
          todos: [
            { content: "TODO-MARKER write hello", status: "in_progress", priority: "high", id: "1" },
            { content: "TODO-MARKER edit hello", status: "pending", priority: "medium", id: "2" },
          ],
        },
      },
      { id: "call_write", name: "write", arguments: { filePath: hello, content: "hello\n" } },
      {
        id: "call_edit",
        name: "edit",
        arguments: { filePath: hello, oldString: "hello", newString: "hello edited" },
      },
      { id: "call_bash", name: "bash", arguments: { command: "echo ran > bash.txt", description: "echo" } },
      {
        id: "call_task",
        name: "task",
        arguments: {
          description: "say a word",
          prompt: "SUBAGENT-TASK say a word",
          subagent_type: "general",
        },
      },
      { id: "call_mcp", name: "tiny_ping", arguments: {} },
    ];
    const mock = await startChatMock({
      reply: (request: ChatRequest, n: number): ChatReply => {
        const messages = JSON.stringify(request.messages ?? []);
        if (messages.includes("SUBAGENT-TASK") && !messages.includes("Do the work"))
          return "subagent says HERON-5";
        if (!messages.includes("Do the work")) return `title ${n}`;
        const next = calls.find((call) => !messages.includes(call.id));
        return next ? { toolCall: next } : `done ${n}`;
      },
    });
    try {
      const homeBefore = await snapshotDirectory(first.home);
      const cwdBefore = await snapshotDirectory(first.cwd);
      const ran = await runOpenCode({ cli, baseUrl: mock.url, ...first, prompt: "Do the work" });
      expect(ran.code, ran.report).toBe(0);
      const sessionId = ran.sessionId as string;
      const diff = [
        ...changedPaths(homeBefore, await snapshotDirectory(first.home), "home/"),
        ...changedPaths(cwdBefore, await snapshotDirectory(first.cwd), "cwd/"),
      ]
        // Provider packages OpenCode installs: thousands of files of npm's.
        .filter((entry) => !entry.path.includes("/node_modules/"))
        .map((entry) => ({ ...entry, rule: classifyPath(OPENCODE_PATHS, entry.path, {}) }));
      console.log(
        classificationTable(
          `OpenCode ${cli.ready ? cli.version : ""}: the paths one session created or changed`,
          diff,
        ),
      );
      expect(unclassifiedPaths(diff)).toEqual([]);
      expect(await readFile(hello, "utf8")).toBe("hello edited\n");

      const captured = await captureSession({ agent: "opencode", sessionId, opencode: opencodeIn(first) });
      // The session's export, then the child session its task subagent ran in.
      const paths = captured.manifest.files.map((file) => file.path);
      expect(paths[0]).toBe(`${sessionId}.json`);
      expect(paths).toHaveLength(2);
      const childId = paths[1]!.slice(0, -".json".length);
      // What the exports carry of the session's environment: its conversation, with the todo list
      // as the todowrite call wrote it and the subagent's answer, and the subagent's own session;
      // not the session's todo rows (OpenCode 1.18.33 exports none), lost with the container.
      const files = (await readSessionFiles(captured)).files;
      const exported = new TextDecoder().decode(files.get(`${sessionId}.json`));
      expect(exported).toContain("TODO-MARKER edit hello");
      expect(exported).toContain("subagent says HERON-5");
      const childExport = files.get(`${childId}.json`)!;
      expect(new TextDecoder().decode(childExport)).toContain("SUBAGENT-TASK say a word");
      await rm(first.home, { recursive: true });

      const second = await createAgentContainer(root, "opencode-2");
      // The user's configuration comes back as the user had it (OpenCode's is not captured).
      await mkdir(join(second.home, ".config", "opencode"), { recursive: true });
      await writeFile(join(second.home, ".config", "opencode", "opencode.json"), userConfig);
      // Imported from the directory the session is resumed in: OpenCode files a session under
      // the project of the directory it is imported from (resumed elsewhere, it fails before
      // asking the model: "Unexpected server error").
      await restoreSession(overTheWire(captured), { opencode: { ...opencodeIn(second), cwd: first.cwd } });
      // The child session is in the new database, its conversation as it was exported, under its parent.
      const again = await captureSession({
        agent: "opencode",
        sessionId: childId,
        opencode: { ...opencodeIn(second), cwd: first.cwd },
      });
      const parse = (bytes: Uint8Array | undefined) => JSON.parse(new TextDecoder().decode(bytes));
      const reexported = parse((await readSessionFiles(again)).files.get(`${childId}.json`));
      expect(reexported.messages).toEqual(parse(childExport).messages);
      expect(reexported.info.parentID).toBe(sessionId);
      const before = mock.requests.length;
      const resumed = await runOpenCode({
        cli,
        baseUrl: mock.url,
        home: second.home,
        cwd: first.cwd,
        prompt: "What is left?",
        resume: sessionId,
      });
      expect(resumed.code, resumed.report).toBe(0);
      const after = JSON.stringify(mock.requests.slice(before).map((request) => request.body));
      // The todo list and the subagent's answer come back as the conversation carried them.
      expect(after).toContain("TODO-MARKER edit hello");
      expect(after).toContain("subagent says HERON-5");
    } finally {
      await mock.close();
    }
  });
});
