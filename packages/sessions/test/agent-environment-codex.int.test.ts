import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  createAgentContainer,
  installAgentCli,
  type ResponsesReply,
  type ResponsesRequest,
  runCodex,
  startResponsesMock,
} from "@stowage/agent-clis";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { captureSession, restoreSession } from "../src/index.js";
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

// Codex's whole environment, found from the CLI itself (see agent-environment.int.test.ts for
// Claude Code): a real `codex exec` session that sets a goal, runs a shell command that writes a
// file, spawns a subagent and calls an MCP server configured in its config.toml, its HOME and
// working directory diffed before and after; every path must be classified. The subagent runs
// as its own thread with its own rollout, which names this session: captured with it and restored
// byte-identical beside it; the resumed run carries the earlier conversation, and the subagent,
// resumed and asked again, its own (without its rollout, as before, it remembers nothing).
const cli = await installAgentCli("codex");
const root = await tempDirectory("stowage-e2e-environment-codex-");

/** Codex 0.169.0, as the run below found it (paths below HOME; `SID` the session, `DAY` its folder). */
const CODEX_PATHS: readonly PathRule[] = [
  { pattern: "home/.codex/sessions/DAY/rollout-[0-9T-]+-SID\\.jsonl", class: "session", why: "the rollout" },
  {
    pattern: "home/.codex/sessions/\\d{4}/\\d{2}/\\d{2}/rollout-[0-9T-]+-[0-9a-f-]{36}\\.jsonl",
    class: "session",
    why: "a subagent's own rollout (spawn_agent): its session_meta names the session",
  },
  {
    pattern: "home/.codex/(state|goals|logs|memories|queue|thread_history)_\\d+\\.sqlite(-shm|-wal)?",
    class: "machine-local",
    why: "SQLite databases every session shares (thread index, goals, logs, memories, queue, history projection), in WAL mode: never copied file by file; the rollout alone resumes (the goal set with create_goal is captured through codex app-server when the CLI is given: agent-goal-codex.int.test.ts)",
  },
  {
    pattern: "home/.codex/skills/\\.system(/.+)?",
    class: "machine-local",
    why: "the system skills the CLI installs at start",
  },
  { pattern: "home/.codex/installation_id", class: "machine-local", why: "this install's id" },
  { pattern: "home/.codex/\\.sandbox_migration", class: "machine-local", why: "a one-time migration marker" },
  {
    pattern: "home/.codex/(\\.tmp|tmp|thread-writer-locks|shell_snapshots|log)(/.+)?",
    class: "machine-local",
    why: "locks, temp files, shell snapshots and logs of running processes",
  },
  { pattern: "home/tmp", class: "machine-local", why: "the container's temp directory" },
  { pattern: "cwd/hello\\.txt", class: "work", why: "the task's output: the user's files" },
];

/** Real CLI runs take a second or more each, many more on a loaded machine. */
const TIMEOUT_MS = 600_000;

interface Call {
  callId: string;
  name: string;
  namespace?: string;
  arguments: (input: string) => Record<string, unknown>;
}

describe.skipIf(!cli.ready)("Codex: the session's whole environment", { timeout: TIMEOUT_MS }, () => {
  it("classifies every path, captures the session with its subagent's rollout, restores it byte-identical and resumes", async () => {
    const first = await createAgentContainer(root, "codex-1");
    await mkdir(join(first.home, ".codex"));
    await writeFile(join(first.cwd, "tiny-mcp.cjs"), TINY_MCP_SERVER);
    await writeFile(
      join(first.home, ".codex", "config.toml"),
      `[mcp_servers.tiny]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(join(first.cwd, "tiny-mcp.cjs"))}]\n`,
    );
    const calls: Call[] = [
      {
        callId: "call_goal",
        name: "create_goal",
        arguments: () => ({ objective: "GOAL-MARKER write hello.txt" }),
      },
      { callId: "call_exec", name: "exec_command", arguments: () => ({ cmd: "echo hello > hello.txt" }) },
      {
        callId: "call_spawn",
        name: "spawn_agent",
        namespace: "multi_agent_v1",
        arguments: () => ({ message: "SUBAGENT-TASK say a word" }),
      },
      {
        callId: "call_wait",
        name: "wait_agent",
        namespace: "multi_agent_v1",
        // The subagent's id, as spawn_agent answered it.
        arguments: (input) => ({
          targets: [/"agent_id\\?":\\?"([0-9a-f-]{36})/.exec(input)?.[1]],
          timeout_ms: 10_000,
        }),
      },
      { callId: "call_mcp", name: "ping", namespace: "mcp__tiny", arguments: () => ({}) },
    ];
    // After the resume: the subagent is resumed from its restored rollout and asked again.
    let childId = "";
    const followUp: Call[] = [
      {
        callId: "call_resume",
        name: "resume_agent",
        namespace: "multi_agent_v1",
        arguments: () => ({ id: childId }),
      },
      {
        callId: "call_again",
        name: "send_input",
        namespace: "multi_agent_v1",
        arguments: () => ({ target: childId, message: "SECOND-ASK what did you say?" }),
      },
      {
        callId: "call_wait_again",
        name: "wait_agent",
        namespace: "multi_agent_v1",
        arguments: () => ({ targets: [childId], timeout_ms: 10_000 }),
      },
    ];
    const mock = await startResponsesMock({
      reply: (request: ResponsesRequest, n: number): ResponsesReply => {
        const input = JSON.stringify(request.input ?? []);
        if (input.includes("SECOND-ASK") && !input.includes("Ask the subagent again"))
          return "subagent again";
        if (input.includes("SUBAGENT-TASK") && !input.includes("Do the work")) return "subagent says HERON-5";
        if (input.includes("Ask the subagent again")) {
          const next = followUp.find((call) => !input.includes(call.callId));
          if (!next) return `done ${n}`;
          const { arguments: args, ...rest } = next;
          return { functionCall: { ...rest, arguments: args(input) } };
        }
        if (!input.includes("Do the work")) return `answer ${n}`;
        const next = calls.find((call) => !input.includes(call.callId));
        if (!next) return `done ${n}`;
        const { arguments: args, ...rest } = next;
        return { functionCall: { ...rest, arguments: args(input) } };
      },
    });
    try {
      const homeBefore = await snapshotDirectory(first.home);
      const cwdBefore = await snapshotDirectory(first.cwd);
      const ran = await runCodex({
        cli,
        baseUrl: mock.url,
        ...first,
        prompt: "Do the work",
        extraArgs: ["--dangerously-bypass-approvals-and-sandbox"],
      });
      expect(ran.code, ran.report).toBe(0);
      const sessionId = ran.sessionId as string;
      const homeAfter = await snapshotDirectory(first.home);
      const own = Object.keys(homeAfter).find((path) => path.endsWith(`-${sessionId}.jsonl`)) as string;
      const day = own.split("/").slice(2, 5).join("/");
      const diff = [
        ...changedPaths(homeBefore, homeAfter, "home/"),
        ...changedPaths(cwdBefore, await snapshotDirectory(first.cwd), "cwd/"),
      ].map((entry) => ({
        ...entry,
        rule: classifyPath(CODEX_PATHS, entry.path, { SID: sessionId, DAY: day }),
      }));
      console.log(
        classificationTable(
          `Codex ${cli.ready ? cli.version : ""}: the paths one session created or changed`,
          diff,
        ),
      );
      expect(unclassifiedPaths(diff)).toEqual([]);
      const rollouts = diff
        .filter((entry) => entry.rule?.class === "session")
        .map((entry) => entry.path.slice("home/.codex/sessions/".length));
      expect(rollouts.length, "the session's rollout and its subagent's").toBe(2);

      const codexHome = join(first.home, ".codex");
      const captured = await captureSession({ agent: "codex", sessionId, codexHome });
      const paths = captured.manifest.files.map((file) => file.path);
      expect(paths[0]).toBe(own.slice(".codex/sessions/".length));
      expect([...paths].sort()).toEqual([...rollouts].sort());
      const originals = new Map<string, Buffer>();
      for (const path of paths) originals.set(path, await readFile(join(codexHome, "sessions", path)));
      // The control: the rollout alone, as captures were before.
      const alone = await captureSession({ agent: "codex", sessionId, codexHome, includeSubagents: false });
      expect(alone.manifest.files).toHaveLength(1);
      await rm(first.home, { recursive: true });

      const second = await createAgentContainer(root, "codex-2");
      const restoredHome = join(second.home, ".codex");
      await restoreSession(overTheWire(captured), { codexHome: restoredHome });
      for (const [path, bytes] of originals)
        expect(await readFile(join(restoredHome, "sessions", path))).toEqual(bytes);

      const before = mock.requests.length;
      const resumed = await runCodex({
        cli,
        baseUrl: mock.url,
        home: second.home,
        cwd: first.cwd,
        prompt: "What was the goal?",
        resume: sessionId,
      });
      expect(resumed.code, resumed.report).toBe(0);
      const after = JSON.stringify(mock.requests.slice(before).map((request) => request.body));
      expect(after).toContain("GOAL-MARKER write hello.txt");
      expect(after).toContain("pong from tiny");

      // The subagent's own thread comes back from its restored rollout: resumed and asked again,
      // its request carries what it was asked and answered before the wipe.
      childId = paths[1]!.match(/-([0-9a-f-]{36})\.jsonl$/)![1]!;
      /** Whether, asked again in `home`, the subagent's request carries its earlier conversation. */
      const subagentRemembers = async (home: string) => {
        const beforeAgain = mock.requests.length;
        await runCodex({
          cli,
          baseUrl: mock.url,
          home,
          cwd: first.cwd,
          prompt: "Ask the subagent again",
          resume: sessionId,
          extraArgs: ["--dangerously-bypass-approvals-and-sandbox"],
        });
        return mock.requests
          .slice(beforeAgain)
          .map((request) => JSON.stringify(request.body))
          .filter((body) => body.includes("SECOND-ASK") && !body.includes("Ask the subagent again"))
          .some(
            (body) => body.includes("SUBAGENT-TASK say a word") && body.includes("subagent says HERON-5"),
          );
      };
      // Without its rollout the subagent cannot be resumed: asked again, it remembers nothing.
      const control = await createAgentContainer(root, "codex-control");
      await restoreSession(overTheWire(alone), { codexHome: join(control.home, ".codex") });
      expect(await subagentRemembers(control.home)).toBe(false);
      expect(await subagentRemembers(second.home)).toBe(true);
    } finally {
      await mock.close();
    }
  });
});
