import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type AnthropicReply,
  type AnthropicRequest,
  createAgentContainer,
  installAgentCli,
  runClaude,
  startAnthropicMock,
} from "@stowage/agent-clis";
import { tempDirectory } from "@stowage/test-support";
import { beforeAll, describe, expect, it } from "vitest";
import { captureSession, restoreSession } from "../src/index.js";
import { snapshotDirectory } from "./dir-snapshot.js";
import {
  changedPaths as changed,
  classificationTable,
  classifyPath,
  type PathRule,
  TINY_MCP_SERVER,
  unclassifiedPaths,
} from "./environment-diff.js";
import { overTheWire } from "./over-the-wire.js";

// The session's whole environment, found from the agent itself: a real Claude Code session that
// does what a coding task does (a plan in plan mode, a task list, file edits with rewind
// checkpoints, a shell command, a subagent, a project MCP server) against the mock model, its
// HOME and working directory diffed before and after. Every path the run created or changed
// must match a row of the table below, or the test fails: a new CLI version that writes a new
// per-session path is caught here instead of silently lost. Then the session is captured,
// the container wiped, restored into a new HOME byte-identical, and resumed: the resumed CLI
// lists the restored tasks, finds the restored plan, and rewinds a file from a restored
// checkpoint. Outside CI a CLI that cannot be installed skips; in CI it fails.
const cli = await installAgentCli("claude-code");
const root = await tempDirectory("stowage-e2e-environment-");

/**
 * Claude Code 2.1.330, as the run below found it. A directory whose files are classified needs
 * no row of its own; an empty one does.
 */
const CLAUDE_CODE_PATHS: readonly PathRule[] = [
  { pattern: "home/.claude/projects/KEY/SID.jsonl", class: "session", why: "the transcript" },
  {
    pattern: "home/.claude/projects/KEY/SID/.+",
    class: "session",
    why: "its companion directory: subagent transcripts and their meta, spilled tool results",
  },
  {
    pattern: "home/.claude/file-history/SID/[^/]+@v\\d+",
    class: "session",
    why: "rewind checkpoints: backups of the files the session edited (--rewind-files, /rewind)",
  },
  {
    pattern: "home/.claude/tasks/SID/\\d+\\.json",
    class: "session",
    why: "the task list (TaskCreate/TaskUpdate/TaskList)",
  },
  {
    pattern: "home/.claude/tasks/SID/\\.lock",
    class: "machine-local",
    why: "a lock the running CLI holds on the task list; the resumed run takes its own",
  },
  {
    pattern: "home/.claude/plans/SLUG\\.md",
    class: "session",
    why: "the plan written in plan mode; the transcript names it by its slug",
  },
  {
    pattern: "home/.claude/session-env/SID(/.+)?",
    class: "session",
    why: "the environment SessionStart hooks set for the session's shell commands (empty without hooks)",
  },
  {
    pattern: "home/.claude/todos/SID-agent-[^/]+\\.json",
    class: "session",
    why: "the TodoWrite list of versions that have that tool (2.1.330 keeps tasks/ instead)",
  },
  {
    pattern: "home/.claude/projects/KEY/memory(/.+)?",
    class: "config",
    why: "the project's auto-memory, shared by all its sessions, captured on request (withMemory; empty here)",
  },
  {
    pattern: "home/\\.claude\\.json",
    class: "machine-local",
    why: "the install's state: machine and user ids, first start, migrations, per-project trust; holds the OAuth account or API key once logged in (its user- and local-scope MCP servers alone are captured on request: withConfig)",
  },
  {
    pattern: "home/.claude/backups/\\.claude\\.json\\.backup\\.\\d+",
    class: "machine-local",
    why: "backups of .claude.json",
  },
  {
    pattern: "home/.claude/plugins/store/[^/]+\\.json",
    class: "machine-local",
    why: "a built-in plugin's queued usage rows (telemetry)",
  },
  {
    pattern: "home/.claude/\\.last-cleanup",
    class: "machine-local",
    why: "when this install last ran its cleanupPeriodDays sweep (written at most once a day, so only some runs show it)",
  },
  {
    pattern: "home/.claude/sessions(/.+)?",
    class: "machine-local",
    why: "the registry of CLI processes running now",
  },
  {
    pattern: "home/.claude/shell-snapshots(/.+)?",
    class: "machine-local",
    why: "a snapshot of this machine's shell functions and aliases for Bash, taken at start",
  },
  {
    pattern: "home/.claude/(debug|statsig|telemetry|logs)(/.+)?",
    class: "machine-local",
    why: "logs, feature-flag caches and telemetry",
  },
  {
    pattern: "home/.cache/claude-cli-nodejs/KEY/mcp-logs-[^/]+/[^/]+\\.jsonl",
    class: "machine-local",
    why: "MCP servers' logs",
  },
  {
    pattern: "home/tmp/claude-\\d+/KEY/SID/.+",
    class: "machine-local",
    why: "the temp directory: a start marker and background tasks' live output (the transcript keeps their results)",
  },
  {
    pattern: "home/tmp/claude-\\d+/fswatch-probe-[^/]+/probe",
    class: "machine-local",
    why: "a file-watching probe",
  },
  { pattern: "home/tmp/cc-socks", class: "machine-local", why: "sockets of running processes" },
  { pattern: "cwd/(hello|bash)\\.txt", class: "work", why: "the task's output: the user's files" },
];

function classify(path: string, ids: { key: string; sid: string; slug: string }): PathRule | undefined {
  return classifyPath(CLAUDE_CODE_PATHS, path, { KEY: ids.key, SID: ids.sid, SLUG: ids.slug });
}

/** The tasks and file checkpointing are off in headless runs unless these are set. */
const CLAUDE_ENV = { CLAUDE_CODE_ENABLE_TASKS: "1", CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING: "1" };

interface Step {
  id: string;
  name: string;
  input: () => Record<string, unknown>;
}

/**
 * The scripted model: for the prompt a request carries, the first step whose tool-use id the
 * conversation does not hold yet; text once all are done. Deferred tools (tasks, MCP) are loaded
 * with ToolSearch first, as the model must.
 */
function scriptedReply(scripts: Record<string, Step[]>, subagentWord: string) {
  return (request: AnthropicRequest, n: number): AnthropicReply => {
    const conversation = JSON.stringify(request.messages ?? []);
    if (JSON.stringify(request.messages?.[0] ?? "").includes("SUBAGENT-TASK")) return { text: subagentWord };
    const prompt = Object.keys(scripts).findLast((key) => conversation.includes(key));
    const next =
      prompt === undefined ? undefined : scripts[prompt]!.find((step) => !conversation.includes(step.id));
    return next ? { toolUse: { id: next.id, name: next.name, input: next.input() } } : { text: `done ${n}` };
  };
}

/** Real CLI runs take a second or more each, many more on a loaded machine. */
const TIMEOUT_MS = 600_000;

describe.skipIf(!cli.ready)("Claude Code: the session's whole environment", { timeout: TIMEOUT_MS }, () => {
  let first: { home: string; cwd: string };
  let sessionId: string;
  let slug: string;
  let planPath = "";
  let diff: { path: string; kind: string; rule: PathRule | undefined }[];
  let mock: Awaited<ReturnType<typeof startAnthropicMock>>;

  beforeAll(async () => {
    first = await createAgentContainer(root, "env-1");
    const hello = join(first.cwd, "hello.txt");
    const scripts: Record<string, Step[]> = {
      "Plan the work": [
        {
          id: "toolu_plan",
          name: "Write",
          input: () => ({ file_path: planPath, content: "# Plan\nPLAN-MARKER: write hello.txt\n" }),
        },
      ],
      "Now do the work": [
        {
          id: "toolu_search",
          name: "ToolSearch",
          input: () => ({ query: "select:mcp__tiny__ping,TaskCreate,TaskUpdate", max_results: 5 }),
        },
        {
          id: "toolu_task1",
          name: "TaskCreate",
          input: () => ({
            subject: "TASK-ONE write hello",
            description: "write hello.txt",
            activeForm: "Writing",
          }),
        },
        {
          id: "toolu_task2",
          name: "TaskCreate",
          input: () => ({
            subject: "TASK-TWO edit hello",
            description: "edit hello.txt",
            activeForm: "Editing",
          }),
        },
        { id: "toolu_done1", name: "TaskUpdate", input: () => ({ taskId: "1", status: "completed" }) },
        { id: "toolu_write", name: "Write", input: () => ({ file_path: hello, content: "hello\n" }) },
        {
          id: "toolu_bash",
          name: "Bash",
          input: () => ({ command: "echo ran > bash.txt", description: "echo" }),
        },
        {
          id: "toolu_agent",
          name: "Agent",
          input: () => ({
            description: "say a word",
            prompt: "SUBAGENT-TASK: say a word",
            subagent_type: "general-purpose",
            run_in_background: false,
          }),
        },
        { id: "toolu_mcp", name: "mcp__tiny__ping", input: () => ({}) },
      ],
      "Now edit": [
        {
          id: "toolu_edit",
          name: "Edit",
          input: () => ({ file_path: hello, old_string: "hello", new_string: "hello edited" }),
        },
      ],
      "What is left?": [
        {
          id: "toolu_search_list",
          name: "ToolSearch",
          input: () => ({ query: "select:TaskList,mcp__tiny__ping", max_results: 5 }),
        },
        { id: "toolu_list", name: "TaskList", input: () => ({}) },
      ],
    };
    const reply = scriptedReply(scripts, "subagent says HERON-5");
    mock = await startAnthropicMock({
      reply: (request, n) => {
        // Plan mode tells the model where to write its plan: <configDir>/plans/<slug>.md.
        planPath ||= JSON.stringify(request).match(/\/[^"\\ ]*\/plans\/[a-z0-9-]+\.md/)?.[0] ?? "";
        return reply(request, n);
      },
    });
    // The project's configuration, there before the session: an MCP server and its approval.
    await writeFile(join(first.cwd, "tiny-mcp.cjs"), TINY_MCP_SERVER);
    await writeFile(
      join(first.cwd, ".mcp.json"),
      JSON.stringify({
        mcpServers: { tiny: { command: process.execPath, args: [join(first.cwd, "tiny-mcp.cjs")] } },
      }),
    );
    await mkdir(join(first.cwd, ".claude"));
    await writeFile(
      join(first.cwd, ".claude", "settings.json"),
      JSON.stringify({ enableAllProjectMcpServers: true }),
    );

    const homeBefore = await snapshotDirectory(first.home);
    const cwdBefore = await snapshotDirectory(first.cwd);
    const run = (prompt: string, extraArgs: string[], resume?: string) =>
      runClaude({
        cli,
        baseUrl: mock.url,
        ...first,
        prompt,
        env: CLAUDE_ENV,
        extraArgs,
        ...(resume ? { resume } : {}),
      });
    const planned = await run("Plan the work", ["--permission-mode", "plan"]);
    expect(planned.code, planned.report).toBe(0);
    sessionId = planned.sessionId as string;
    const tools = ["Write", "Edit", "Bash", "Agent", "TaskCreate", "TaskUpdate", "mcp__tiny__ping"];
    const worked = await run("Now do the work", ["--allowedTools", ...tools], sessionId);
    expect(worked.code, worked.report).toBe(0);
    const edited = await run("Now edit", ["--allowedTools", "Edit"], sessionId);
    expect(edited.code, edited.report).toBe(0);
    expect(planPath).not.toBe("");
    slug = planPath.split("/").at(-1)!.replace(/\.md$/, "");

    const key = first.cwd.replace(/[^A-Za-z0-9]/g, "-");
    const ids = { key, sid: sessionId, slug };
    diff = [
      ...changed(homeBefore, await snapshotDirectory(first.home), "home/"),
      ...changed(cwdBefore, await snapshotDirectory(first.cwd), "cwd/"),
    ].map((entry) => ({ ...entry, rule: classify(entry.path, ids) }));
  });

  it("classifies every path the session created or changed, and finds the session's own", () => {
    console.log(
      classificationTable(
        `Claude Code ${cli.ready ? cli.version : ""}: the paths one session created or changed`,
        diff,
      ),
    );
    expect(unclassifiedPaths(diff)).toEqual([]);
    const session = diff.filter((entry) => entry.rule?.class === "session").map((entry) => entry.path);
    const config = `home/.claude`;
    // The issue's list, verified: the transcript, its companion directory, the rewind
    // checkpoints, the plan, session-env; the task list is where 2.1.330 keeps todos.
    expect(session).toContain(
      `${config}/projects/${first.cwd.replace(/[^A-Za-z0-9]/g, "-")}/${sessionId}.jsonl`,
    );
    expect(session.some((path) => path.includes(`/${sessionId}/subagents/agent-`))).toBe(true);
    expect(session.some((path) => path.startsWith(`${config}/file-history/${sessionId}/`))).toBe(true);
    expect(session).toContain(`${config}/tasks/${sessionId}/1.json`);
    expect(session).toContain(`${config}/plans/${slug}.md`);
    expect(session).toContain(`${config}/session-env/${sessionId}`);
  });

  it("captures exactly the session's files, restores them byte-identical into a new HOME, and the resumed CLI uses them", async () => {
    const configDir = join(first.home, ".claude");
    const captured = await captureSession({ sessionId, cwd: first.cwd, configDir, withConfig: true });
    const key = captured.projectKey as string;
    // Every session file of the diff, as its archive path; nothing else.
    const expected = diff
      .filter((entry) => entry.rule?.class === "session" && entry.kind.startsWith("file "))
      .map((entry) => entry.path.slice("home/.claude/".length))
      .map((path) =>
        path.startsWith(`projects/${key}/`) ? path.slice(`projects/${key}/`.length) : `~config/${path}`,
      )
      .sort();
    const paths = captured.manifest.files.map((file) => file.path);
    const isConfiguration = (path: string) => /^~(user|project|project-dir|claude\.json)\//.test(path);
    expect(paths.filter((path) => !isConfiguration(path)).sort()).toEqual(expected);
    // On request, the project's configuration too (this HOME has no user settings): no secrets in it.
    expect(paths.filter(isConfiguration).sort()).toEqual([
      "~project/.claude/settings.json",
      "~project/.mcp.json",
    ]);
    expect(captured.secretsLeftOut).toEqual([]);
    const originals = new Map<string, Buffer>();
    for (const entry of expected) {
      const relative = entry.startsWith("~config/") ? entry.slice(8) : `projects/${key}/${entry}`;
      originals.set(relative, await readFile(join(configDir, relative)));
    }
    // The control: the same session without its environment, as captures were before.
    const bare = await captureSession({ sessionId, cwd: first.cwd, configDir, includeEnvironment: false });
    expect(bare.manifest.files.every((file) => !file.path.startsWith("~config/"))).toBe(true);
    await rm(first.home, { recursive: true });
    // The project's MCP configuration is lost with the container too; the server's script stays.
    await rm(join(first.cwd, ".mcp.json"));
    await rm(join(first.cwd, ".claude"), { recursive: true });

    const second = await createAgentContainer(root, "env-2");
    const restoredConfig = join(second.home, ".claude");
    const restored = await restoreSession(overTheWire(captured), {
      cwd: first.cwd,
      configDir: restoredConfig,
    });
    expect(restored.sessionId).toBe(sessionId);
    expect(restored.configuration?.written.sort()).toEqual([
      "~project/.claude/settings.json",
      "~project/.mcp.json",
    ]);
    for (const [relative, bytes] of originals)
      expect(await readFile(join(restoredConfig, relative))).toEqual(bytes);

    // Resumed in plan mode: the first request says the restored plan exists where the CLI looks,
    // and the task list the CLI reads from disk is the restored one, statuses included.
    const before = mock.requests.length;
    const resumed = await runClaude({
      cli,
      baseUrl: mock.url,
      home: second.home,
      cwd: first.cwd,
      prompt: "What is left?",
      resume: sessionId,
      env: CLAUDE_ENV,
      extraArgs: ["--permission-mode", "plan", "--allowedTools", "TaskList"],
    });
    expect(resumed.code, resumed.report).toBe(0);
    const requests = mock.requests.slice(before).map((request) => JSON.stringify(request.body));
    const planInfo = requests[0]!.lastIndexOf("## Plan File Info");
    expect(planInfo).toBeGreaterThan(-1);
    expect(requests[0]!.slice(planInfo, planInfo + 400)).toContain(
      `A plan file already exists at ${join(restoredConfig, "plans", `${slug}.md`)}`,
    );
    expect(requests.at(-1)).toContain(
      "#1 [completed] TASK-ONE write hello\\n#2 [pending] TASK-TWO edit hello",
    );
    // The restored .mcp.json and its approval: the project's MCP server is there for the resumed run.
    const last = mock.requests.at(-1)!.body as AnthropicRequest;
    const searched = last.messages
      ?.flatMap((message) => (Array.isArray(message.content) ? message.content : []))
      .find((block) => block?.type === "tool_result" && block.tool_use_id === "toolu_search_list");
    expect(JSON.stringify(searched)).toContain('"tool_name":"mcp__tiny__ping"');

    // The rewind checkpoint of "Now edit" comes back from the restored file-history.
    expect(await readFile(join(first.cwd, "hello.txt"), "utf8")).toBe("hello edited\n");
    const transcript = (await readFile(restored.transcriptPath as string, "utf8"))
      .split("\n")
      .filter(Boolean);
    const editTurn = transcript
      .map((line) => JSON.parse(line))
      .find((record) => record.type === "user" && record.message?.content === "Now edit");
    const rewind = (home: string) =>
      runClaude({
        cli,
        baseUrl: mock.url,
        home,
        cwd: first.cwd,
        // --rewind-files is a standalone operation: no prompt.
        prompt: "",
        resume: sessionId,
        env: CLAUDE_ENV,
        extraArgs: ["--rewind-files", editTurn.uuid],
      });
    // Without the restored checkpoints there is nothing to rewind to: the file stays edited.
    const control = await createAgentContainer(root, "env-control");
    await restoreSession(overTheWire(bare), { cwd: first.cwd, configDir: join(control.home, ".claude") });
    await rewind(control.home);
    expect(await readFile(join(first.cwd, "hello.txt"), "utf8")).toBe("hello edited\n");
    const rewound = await rewind(second.home);
    expect(rewound.code, rewound.report).toBe(0);
    expect(await readFile(join(first.cwd, "hello.txt"), "utf8")).toBe("hello\n");
  });
});
