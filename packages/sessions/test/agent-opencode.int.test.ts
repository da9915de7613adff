import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { cp, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  type AgentContainer,
  createAgentContainer,
  installAgentCli,
  listOpenCodeSessions,
  openCodeEnv,
  REAL_CLI_RUN_TIMEOUT_MS,
  requestsMention,
  runOpenCode,
  startChatMock,
} from "@stowage/agent-clis";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it, onTestFinished } from "vitest";
import {
  type CapturedSession,
  captureSession,
  type OpencodeCliOptions,
  restoreSession,
  verifySessionBlob,
} from "../src/index.js";
import { stowageJson } from "./agent-stowage-cli.js";
import { expectRecordedVersion, nextMajor } from "./agent-version-checks.js";
import { buildArchive } from "./build-archive.js";
import { expectFallbackReachesNewSession } from "./fallback-history.js";
import { overTheWire } from "./over-the-wire.js";

// Capture → wipe the container → restore into a new one → continue, with the real OpenCode CLI
// against a mock chat completions API: the continued request must carry the earlier conversation.
const run = promisify(execFile);
const cli = await installAgentCli("opencode");
const root = await tempDirectory("stowage-e2e-opencode-");

/**
 * An OpenCode run takes 5–8 s on an idle machine, far more on a loaded one (a CLI call alone took
 * 15 s at a load of 15 on two cores); each test runs the CLI up to a dozen times.
 */
const TIMEOUT_MS = 600_000;

interface CapturedOnce {
  captured: CapturedSession;
  cwd: string;
  /** What the OpenCode CLI's `--version` printed in the told session's HOME. */
  versionOutput: string;
}

const FACT = "the launch code is ZEBRA-1187";

let captured: Promise<CapturedOnce> | undefined;

/** One real session (told a launch code), captured once and its HOME wiped, for the tests that restore it. */
function capturedOnce(): Promise<CapturedOnce> {
  captured ??= (async () => {
    const mock = await startChatMock();
    try {
      const container = await createAgentContainer(root, "guarded");
      const told = await runOpenCode({
        cli,
        baseUrl: mock.url,
        ...container,
        prompt: `Remember: ${FACT}.`,
      });
      expect(told.code, told.report).toBe(0);
      const session = await captureSession({
        agent: "opencode",
        sessionId: told.sessionId as string,
        opencode: opencodeIn(container),
      });
      // The export's info.version is the installed CLI's `--version`.
      const versionOutput = await expectRecordedVersion(cli, session, openCodeEnv(container.home));
      // The container is gone: what comes back comes from the capture alone.
      await rm(container.home, { recursive: true });
      return { captured: session, cwd: container.cwd, versionOutput };
    } finally {
      await mock.close();
    }
  })();
  return captured;
}

interface RestoredCopy {
  container: AgentContainer;
  sessionId: string;
  /** What `opencode export` printed for the session in the restored database. */
  exported: string;
}

let restored: Promise<RestoredCopy> | undefined;

/**
 * The captured session restored once per file into a new HOME, and what its export printed there.
 * The restore into a new HOME itself is what the first test checks.
 */
function restoredOnce(): Promise<RestoredCopy> {
  restored ??= (async () => {
    const { captured, cwd } = await capturedOnce();
    const container: AgentContainer = { ...(await createAgentContainer(root, "restored-once")), cwd };
    await restoreSession(overTheWire(captured), { opencode: opencodeIn(container) });
    const exported = await opencodeExport(container, captured.sessionId);
    return { container, sessionId: captured.sessionId, exported };
  })();
  return restored;
}

/**
 * A copy of the HOME the captured session was restored into once: the tests that need a database
 * holding it start from the copy, which saves an import and an export (two starts of the CLI,
 * seconds of CPU each) a test.
 */
async function copyOfRestored(name: string): Promise<RestoredCopy> {
  const { container, sessionId, exported } = await restoredOnce();
  const copy: AgentContainer = { ...(await createAgentContainer(root, name)), cwd: container.cwd };
  await cp(container.home, copy.home, { recursive: true });
  return { container: copy, sessionId, exported };
}

/** The request the told session is stored under with the stowage CLI. */
const REQUEST = "req-opencode";
const requestArgs = ["--user", "alice", "--request", REQUEST];

let stored: Promise<{ sessionId: string; cwd: string; dataDir: string }> | undefined;

/**
 * The told session (restored once per file: a real session in a database of its own) stored
 * with `stowage session capture --agent opencode` in a data directory of this file's, its HOME
 * wiped: what the CLI round trip and the fallback restore.
 */
function storedOnce(): Promise<{ sessionId: string; cwd: string; dataDir: string }> {
  stored ??= (async () => {
    if (!cli.ready) throw new Error(cli.reason);
    const { container, sessionId } = await copyOfRestored("stored");
    const dataDir = join(root, "stowage-data");
    // The CLI hands its environment to OpenCode: HOME says whose database it exports from.
    const captured = await stowageJson(
      dataDir,
      [
        ...["session", "capture", "--agent", "opencode", ...requestArgs, "--session", sessionId],
        ...["--opencode", cliCommand(), "--cwd", container.cwd],
      ],
      openCodeEnv(container.home),
    );
    expect(captured).toMatchObject({ sessionId, agentType: "opencode", agentVersion: cli.version });
    await rm(container.home, { recursive: true });
    return { sessionId, cwd: container.cwd, dataDir };
  })();
  return stored;
}

/** The OpenCode executable, for the stowage CLI's `--opencode`. */
function cliCommand(): string {
  if (!cli.ready) throw new Error(cli.reason);
  return cli.command;
}

/** How Stowage runs the same OpenCode binary against one container's database. */
function opencodeIn(container: AgentContainer): OpencodeCliOptions {
  if (!cli.ready) throw new Error(cli.reason);
  return { bin: cli.command, env: openCodeEnv(container.home), cwd: container.cwd };
}

interface OpencodeExport {
  info: { id: string };
  messages: {
    info: { id: string; sessionID: string };
    parts: { id: string; sessionID: string; messageID: string; text?: string }[];
  }[];
}

/** Runs the OpenCode CLI against one container's database; its stdout. */
async function opencodeCli(container: AgentContainer, args: string[]): Promise<string> {
  if (!cli.ready) throw new Error(cli.reason);
  // Into a file: OpenCode exits before a pipe has taken more than 64 KiB of what it printed.
  const out = join(container.home, `stdout-${randomUUID()}`);
  await run("sh", ["-c", 'out="$1"; shift; "$@" > "$out"', "sh", out, cli.command, ...cli.args, ...args], {
    cwd: container.cwd,
    env: openCodeEnv(container.home),
    timeout: REAL_CLI_RUN_TIMEOUT_MS,
  });
  return readFile(out, "utf8");
}

const opencodeExport = (container: AgentContainer, sessionId: string) =>
  opencodeCli(container, ["export", sessionId]);

async function fileOf(container: AgentContainer, name: string, value: unknown): Promise<string> {
  const path = join(container.home, name);
  await writeFile(path, JSON.stringify(value));
  return path;
}

/** An archive of an export as `sessionId`'s, built byte by byte (not by capture). */
const archiveOf = (sessionId: string, exported: unknown) =>
  buildArchive({
    sessionId,
    files: [{ path: `${sessionId}.json`, content: new TextEncoder().encode(JSON.stringify(exported)) }],
    manifest: { agent: "opencode", projectKey: undefined },
  });

/** The requests that answer `prompt` (OpenCode also asks the model for a title, with the prompt alone). */
function answering(requests: Parameters<typeof requestsMention>[0], prompt: string) {
  return requests.filter(
    (request) => requestsMention([request], prompt) && requestsMention([request], "mock reply"),
  );
}

describe.skipIf(!cli.ready)(
  "OpenCode sessions captured, restored into a new HOME and continued",
  { timeout: TIMEOUT_MS },
  () => {
    it("continues a restored session: the model sees the fact told before the wipe", async () => {
      const mock = await startChatMock();
      onTestFinished(() => mock.close());
      if (!cli.ready) throw new Error(cli.reason);
      const { captured, cwd, versionOutput } = await capturedOnce();
      const { sessionId } = captured;
      expect(captured.agent).toBe("opencode");

      // Same working directory, an empty HOME: OpenCode's database does not exist yet.
      const second: AgentContainer = { ...(await createAgentContainer(root, "fact-2")), cwd };
      const into = { opencode: opencodeIn(second) };
      await expectStowageError(
        restoreSession(overTheWire(captured), { ...into, agentVersion: nextMajor(cli.version) }),
        "CONFLICT",
        "AGENT_VERSION_MISMATCH",
      );
      const restored = await restoreSession(overTheWire(captured), { ...into, agentVersion: versionOutput });
      expect(restored.sessionId).toBe(sessionId);
      expect(restored.agentVersionCheck).toEqual({ verdict: "same", version: cli.version });
      expect(await listOpenCodeSessions({ cli, ...second })).toEqual([sessionId]);

      const before = mock.requests.length;
      const resumed = await runOpenCode({
        cli,
        baseUrl: mock.url,
        ...second,
        prompt: "What is the launch code?",
        resume: sessionId,
      });
      expect(resumed.code, resumed.report).toBe(0);
      expect(resumed.sessionId).toBe(sessionId);
      const after = answering(mock.requests.slice(before), "What is the launch code?");
      expect(after.length).toBeGreaterThan(0);
      expect(requestsMention(after, "ZEBRA-1187")).toBe(true);
    });

    it("of two sessions in one database, brings back only the captured one", async () => {
      const mock = await startChatMock();
      onTestFinished(() => mock.close());
      // The told session (restored once per file) and a second one told beside it in its database.
      const { container: first, sessionId: keptId } = await copyOfRestored("two-1");
      const other = await runOpenCode({
        cli,
        baseUrl: mock.url,
        ...first,
        prompt: "Remember: the other word is LYNX-77.",
      });
      expect(other.code, other.report).toBe(0);
      expect(await listOpenCodeSessions({ cli, ...first })).toEqual([keptId, other.sessionId].sort());

      const captured = await captureSession({
        agent: "opencode",
        sessionId: keptId,
        opencode: opencodeIn(first),
      });
      await rm(first.home, { recursive: true });

      const second: AgentContainer = { ...(await createAgentContainer(root, "two-2")), cwd: first.cwd };
      await restoreSession(overTheWire(captured), { opencode: opencodeIn(second) });
      expect(await listOpenCodeSessions({ cli, ...second })).toEqual([keptId]);

      const before = mock.requests.length;
      const resumed = await runOpenCode({
        cli,
        baseUrl: mock.url,
        ...second,
        prompt: "Which code did I give you?",
        resume: keptId,
      });
      expect(resumed.code, resumed.report).toBe(0);
      const after = mock.requests.slice(before);
      expect(requestsMention(answering(after, "Which code did I give you?"), "ZEBRA-1187")).toBe(true);
      expect(requestsMention(after, "LYNX-77")).toBe(false);
    });

    it("a restore never changes another session: its ids are refused, where a bare `opencode import` would add to it", async () => {
      const { container, sessionId, exported: original } = await copyOfRestored("foreign");

      // Session B's export reuses A's message ids with parts of its own: consistent on its own
      // (every message and part names B, every part its message), so a repository stores it.
      const otherId = "ses_0000000000001StowageTestB";
      const hostile = JSON.parse(original) as OpencodeExport;
      expect(hostile.messages.length).toBeGreaterThan(1);
      hostile.info.id = otherId;
      for (const message of hostile.messages) {
        message.info.sessionID = otherId;
        for (const part of message.parts) {
          part.id = `${part.id}B`;
          part.sessionID = otherId;
          if (typeof part.text === "string") part.text = "INJECTED";
        }
      }
      const archive = await archiveOf(otherId, hostile);
      await expect(verifySessionBlob(archive)).resolves.toMatchObject({ format: "archive" });
      const refused = await expectStowageError(
        restoreSession(archive, { opencode: opencodeIn(container) }),
        "INVALID_INPUT",
      );
      expect(refused.reason).toBe("FOREIGN_ENTRY");
      expect(await opencodeExport(container, sessionId)).toBe(original);
      expect(await listOpenCodeSessions({ cli, ...container })).toEqual([sessionId]);

      // Why: the CLI's own import of the same file files B's parts under A's messages.
      await opencodeCli(container, ["import", await fileOf(container, "hostile.json", hostile)]);
      expect(await opencodeExport(container, sessionId)).toContain("INJECTED");
    });

    it("overwrite: false is CONFLICT and the default replaces the session, where a bare `opencode import` keeps the old rows", async () => {
      const { container, sessionId, exported: original } = await copyOfRestored("overwrite");
      expect(original).toContain("ZEBRA-1187");

      // A newer copy of A: another launch code in its first message, its last message gone.
      const newer = JSON.parse(original) as OpencodeExport;
      for (const part of newer.messages[0]!.parts) {
        if (typeof part.text === "string") part.text = part.text.replace("ZEBRA-1187", "OKAPI-42");
      }
      newer.messages.pop();
      const archive = await archiveOf(sessionId, newer);
      await expectStowageError(
        restoreSession(archive, { opencode: opencodeIn(container), overwrite: false }),
        "CONFLICT",
      );
      expect(await opencodeExport(container, sessionId)).toBe(original);
      const restored = await restoreSession(archive, { opencode: opencodeIn(container) });
      expect(restored.replaced).toEqual([`${sessionId}.json`]);
      const after = await opencodeExport(container, sessionId);
      const ids = (exported: OpencodeExport) => exported.messages.map((message) => message.info.id);
      expect(ids(JSON.parse(after))).toEqual(ids(newer));
      expect(after).toContain("OKAPI-42");
      expect(after).not.toContain("ZEBRA-1187");

      // Why: the CLI's own import of the original over it keeps every row that is there.
      await opencodeCli(container, [
        "import",
        await fileOf(container, "original.json", JSON.parse(original)),
      ]);
      const reimported = await opencodeExport(container, sessionId);
      expect(reimported).toContain("OKAPI-42");
      expect(reimported).not.toContain("ZEBRA-1187");
    });

    it("captures a session larger than a pipe holds, whole (OpenCode exits before a pipe drains)", async () => {
      // A new HOME: the session below is the database's only one (no other's ids to ask about).
      const { exported, container: restoredInto } = await restoredOnce();
      const { cwd } = restoredInto;
      const container: AgentContainer = { ...(await createAgentContainer(root, "large")), cwd };
      // The same conversation as another session, its first text 400 KB long.
      const large = JSON.parse(exported) as OpencodeExport;
      const largeId = "ses_0000000000002StowageTestL";
      large.info.id = largeId;
      for (const message of large.messages) {
        message.info.id = `${message.info.id}L`;
        message.info.sessionID = largeId;
        for (const part of message.parts) {
          Object.assign(part, { id: `${part.id}L`, sessionID: largeId, messageID: message.info.id });
        }
      }
      const text = large.messages[0]!.parts.find((part) => typeof part.text === "string")!;
      text.text = `${text.text} ${"OKAPI ".repeat(70_000)}`;
      await restoreSession(await archiveOf(largeId, large), { opencode: opencodeIn(container) });

      const again = await captureSession({
        agent: "opencode",
        sessionId: largeId,
        opencode: opencodeIn(container),
      });
      expect(again.manifest.files[0]!.size).toBeGreaterThan(400_000);
      const fresh: AgentContainer = { ...(await createAgentContainer(root, "large-2")), cwd };
      await restoreSession(overTheWire(again), { opencode: opencodeIn(fresh) });
      const back = JSON.parse(await opencodeExport(fresh, largeId)) as OpencodeExport;
      expect(back.messages.map((message) => message.info.id)).toEqual(
        large.messages.map((message) => message.info.id),
      );
      const backText = back.messages[0]!.parts.find((part) => typeof part.text === "string")!.text!;
      // Compared as a boolean: a failure would otherwise print 400 KB twice.
      expect(backText.length).toBe(text.text.length);
      expect(backText === text.text).toBe(true);
    });

    it("round-trips through the stowage CLI: session capture --agent opencode, wipe, session restore, continue", async () => {
      if (!cli.ready) throw new Error(cli.reason);
      const mock = await startChatMock();
      onTestFinished(() => mock.close());
      const { sessionId, cwd, dataDir } = await storedOnce();
      const opencode = ["--opencode", cliCommand(), "--cwd", cwd];

      const second: AgentContainer = { ...(await createAgentContainer(root, "cli-2")), cwd };
      const restored = await stowageJson(
        dataDir,
        ["session", "restore", ...requestArgs, ...opencode],
        openCodeEnv(second.home),
      );
      expect(restored).toMatchObject({ sessionId, agentType: "opencode" });
      // No --agent-cli: the OpenCode CLI that imports the session is the one whose version counts.
      expect(restored.versionCheck).toEqual({ verdict: "same", version: cli.version });
      expect(await listOpenCodeSessions({ cli, ...second })).toEqual([sessionId]);

      const before = mock.requests.length;
      const resumed = await runOpenCode({
        cli,
        baseUrl: mock.url,
        ...second,
        prompt: "What is the launch code?",
        resume: sessionId,
      });
      expect(resumed.code, resumed.report).toBe(0);
      expect(
        requestsMention(answering(mock.requests.slice(before), "What is the launch code?"), "ZEBRA-1187"),
      ).toBe(true);
    });

    it("falls back to the history when the restore is refused: a new session's model sees the fact", async () => {
      if (!cli.ready) throw new Error(cli.reason);
      const mock = await startChatMock();
      onTestFinished(() => mock.close());
      const { sessionId, dataDir } = await storedOnce();

      const second = await createAgentContainer(root, "fallback-2");
      await expectFallbackReachesNewSession({
        dataDir,
        restoreArgs: [...requestArgs, "--opencode", cliCommand(), "--cwd", second.cwd],
        env: openCodeEnv(second.home),
        newerCli: { directory: root, name: "opencode-next", versionLine: nextMajor(cli.version) },
        expected: { fact: FACT, secret: "ZEBRA-1187", request: REQUEST, sessionId, agent: "opencode" },
        mock,
        start: (prompt) => runOpenCode({ cli, baseUrl: mock.url, ...second, prompt }),
      });
    });
  },
);
