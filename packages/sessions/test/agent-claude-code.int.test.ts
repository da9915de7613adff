import { createHash } from "node:crypto";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type AnthropicRequest,
  createAgentContainer,
  installAgentCli,
  requestsMention,
  runClaude,
  startAnthropicMock,
} from "@stowage/agent-clis";
import { createBlobStore } from "@stowage/blob-store";
import { expectStowageError, seededRandom } from "@stowage/core/testing";
import { createFsObjectStore } from "@stowage/storage-fs";
import { encodePng, filesUnder, tempDirectory } from "@stowage/test-support";
import { describe, expect, it, onTestFinished } from "vitest";
import { type CapturedSession, captureSession, restoreSession } from "../src/index.js";
import { stowageJson } from "./agent-stowage-cli.js";
import { expectRecordedVersion, nextMajor } from "./agent-version-checks.js";
import { expectFallbackReachesNewSession } from "./fallback-history.js";
import { overTheWire } from "./over-the-wire.js";

// Capture → wipe the container → restore into a new one → resume, with the real Claude Code
// against a mock Anthropic API: the resumed request must carry the earlier conversation.
const cli = await installAgentCli("claude-code");
const root = await tempDirectory("stowage-e2e-claude-");

const FACT = "the launch code is ZEBRA-1187";

function messagesText(request: AnthropicRequest): string {
  return JSON.stringify(request.messages ?? []);
}

/** A 400x250 screenshot-like PNG: rows of text-like pixels, so that it is tens of KB like a real one. */
function screenshot(): Buffer {
  const random = seededRandom(29);
  return encodePng(400, 250, (x, y) =>
    y % 12 < 6 && x % 200 < 180 && random() < 0.4 ? [40, 40, 40] : [255, 255, 255],
  );
}

/** The image payloads of a Claude Code transcript's lines: where the Read tool writes an image (twice). */
function readToolImages(jsonl: string): { content: string[]; toolUseResult: string[] } {
  const found = { content: [] as string[], toolUseResult: [] as string[] };
  for (const line of jsonl.split("\n").filter(Boolean)) {
    const record = JSON.parse(line);
    if (typeof record.toolUseResult?.file?.base64 === "string")
      found.toolUseResult.push(record.toolUseResult.file.base64);
    const blocks = Array.isArray(record.message?.content) ? record.message.content : [];
    for (const block of blocks)
      for (const inner of Array.isArray(block?.content) ? block.content : [])
        if (inner?.type === "image" && inner.source?.type === "base64") found.content.push(inner.source.data);
  }
  return found;
}

/** Real CLI runs take seconds each, many more on a loaded machine; the embedded database starts slowly. */
const TIMEOUT_MS = 600_000;

/** The request the session is stored under with the stowage CLI. */
const REQUEST = "req-e2e";
const requestArgs = ["--user", "alice", "--request", REQUEST];

interface ToldOnce {
  sessionId: string;
  /** The told session's working directory (a restore into the same one keeps its project key). */
  cwd: string;
  /** Its capture through the library. */
  captured: CapturedSession;
  /** What `claude --version` printed in its HOME. */
  versionOutput: string;
  /** The stowage data directory it was stored in with `stowage session capture`. */
  dataDir: string;
}

let told: Promise<ToldOnce> | undefined;

/**
 * One real session told {@link FACT}, captured through the library and stored with the stowage
 * CLI, then its HOME wiped: what comes back in the tests below comes from those copies alone.
 * Once per file: each Claude Code run is seconds of CPU.
 */
function toldOnce(): Promise<ToldOnce> {
  told ??= (async () => {
    if (!cli.ready) throw new Error(cli.reason);
    const mock = await startAnthropicMock();
    try {
      const first = await createAgentContainer(root, "told");
      const ran = await runClaude({ cli, baseUrl: mock.url, ...first, prompt: `Remember: ${FACT}.` });
      expect(ran.code, ran.report).toBe(0);
      const sessionId = ran.sessionId as string;
      const configDir = join(first.home, ".claude");
      const captured = await captureSession({ sessionId, cwd: first.cwd, configDir });
      expect(captured.agent).toBe("claude-code");
      // The version the session wrote is the installed CLI's `--version`.
      const env = { PATH: process.env.PATH, HOME: first.home };
      const versionOutput = await expectRecordedVersion(cli, captured, env);

      const dataDir = join(root, "stowage-data");
      const stored = await stowageJson(
        dataDir,
        [
          "session",
          "capture",
          ...requestArgs,
          "--session",
          sessionId,
          "--cwd",
          first.cwd,
          "--config-dir",
          configDir,
        ],
        env,
      );
      expect(stored).toMatchObject({ sessionId, agentVersion: cli.version });
      await rm(first.home, { recursive: true });
      return { sessionId, cwd: first.cwd, captured, versionOutput, dataDir };
    } finally {
      await mock.close();
    }
  })();
  return told;
}

describe.skipIf(!cli.ready)(
  "Claude Code sessions captured, restored into a new HOME and resumed",
  { timeout: TIMEOUT_MS },
  () => {
    it("resumes a restored session: the model sees the fact told before the wipe", async () => {
      if (!cli.ready) throw new Error(cli.reason);
      const mock = await startAnthropicMock();
      onTestFinished(() => mock.close());
      const { sessionId, cwd, captured, versionOutput } = await toldOnce();

      // The new container has the same working directory (same project key), an empty HOME.
      const second = await createAgentContainer(root, "fact-2");
      const into = { cwd, configDir: join(second.home, ".claude") };
      await expectStowageError(
        restoreSession(overTheWire(captured), { ...into, agentVersion: nextMajor(cli.version) }),
        "CONFLICT",
        "AGENT_VERSION_MISMATCH",
      );
      const restored = await restoreSession(overTheWire(captured), { ...into, agentVersion: versionOutput });
      expect(restored.sessionId).toBe(sessionId);
      expect(restored.agentVersionCheck).toEqual({ verdict: "same", version: cli.version });

      const before = mock.requests.length;
      const resumed = await runClaude({
        cli,
        baseUrl: mock.url,
        home: second.home,
        cwd,
        prompt: "What is the launch code?",
        resume: sessionId,
      });
      expect(resumed.code, resumed.report).toBe(0);
      expect(resumed.sessionId).toBe(sessionId);
      const after = mock.requests.slice(before);
      expect(requestsMention(after, "What is the launch code?")).toBe(true);
      expect(requestsMention(after, FACT)).toBe(true);
      expect(requestsMention(after, "mock reply 0: received")).toBe(true);
    });

    it("round-trips through the stowage CLI: session capture, wipe, session restore, resume", async () => {
      if (!cli.ready) throw new Error(cli.reason);
      const mock = await startAnthropicMock();
      onTestFinished(() => mock.close());
      const { sessionId, cwd, dataDir } = await toldOnce();

      const second = await createAgentContainer(root, "cli-2");
      // With --agent-cli, the CLI's `--version` is checked against the one the session recorded.
      const restored = await stowageJson(
        dataDir,
        [
          ...[
            "session",
            "restore",
            ...requestArgs,
            "--cwd",
            cwd,
            "--config-dir",
            join(second.home, ".claude"),
          ],
          ...["--agent-cli", cli.command],
        ],
        { PATH: process.env.PATH, HOME: second.home },
      );
      expect(restored.sessionId).toBe(sessionId);
      expect(restored.versionCheck).toEqual({ verdict: "same", version: cli.version });

      const before = mock.requests.length;
      const resumed = await runClaude({
        cli,
        baseUrl: mock.url,
        home: second.home,
        cwd,
        prompt: "What is the launch code?",
        resume: sessionId,
      });
      expect(resumed.code, resumed.report).toBe(0);
      expect(requestsMention(mock.requests.slice(before), FACT)).toBe(true);
    });

    it("falls back to the history when the restore is refused: a new session's model sees the fact", async () => {
      if (!cli.ready) throw new Error(cli.reason);
      const mock = await startAnthropicMock();
      onTestFinished(() => mock.close());
      const { sessionId, cwd, dataDir } = await toldOnce();

      const second = await createAgentContainer(root, "fallback-2");
      await expectFallbackReachesNewSession({
        dataDir,
        restoreArgs: [...requestArgs, "--cwd", cwd, "--config-dir", join(second.home, ".claude")],
        env: { PATH: process.env.PATH, HOME: second.home },
        newerCli: {
          directory: root,
          name: "claude-next",
          versionLine: `${nextMajor(cli.version)} (Claude Code)`,
        },
        expected: { fact: FACT, secret: "ZEBRA-1187", request: REQUEST, sessionId, agent: "claude-code" },
        mock,
        start: (prompt) => runClaude({ cli, baseUrl: mock.url, ...second, prompt }),
      });
    });

    it("captured as chunks with its screenshot kept once in a blob store, brings back the subagent transcript and the tool-results file, which the resumed session reads", async () => {
      // The script: Read a screenshot (Claude Code writes the image twice in the transcript), Bash
      // prints ~340 KB (Claude Code keeps it in tool-results/<id>.txt), then a subagent answers
      // with a word; after the resume, the model reads the restored tool-results file.
      let toolResultsFile = "";
      const first = await createAgentContainer(root, "companion-1");
      const png = screenshot();
      await writeFile(join(first.cwd, "screen.png"), png);
      const mock = await startAnthropicMock({
        reply: (request) => {
          const last = JSON.stringify(request.messages?.at(-1)?.content ?? "");
          if (JSON.stringify(request.messages?.[0] ?? "").includes("SUBAGENT-TASK"))
            return { text: "subagent says HERON-5" };
          if (last.includes("toolu_read")) return { text: "read the restored output" };
          if (last.includes("What did the numbers end with?"))
            return {
              toolUse: {
                id: "toolu_read",
                name: "Read",
                input: { file_path: toolResultsFile, offset: 59990, limit: 20 },
              },
            };
          if (last.includes("toolu_agent")) return { text: "bash and subagent done" };
          if (last.includes("toolu_bash")) {
            return {
              toolUse: {
                id: "toolu_agent",
                name: "Agent",
                input: {
                  description: "say a word",
                  prompt: "SUBAGENT-TASK: say a word",
                  subagent_type: "general-purpose",
                  run_in_background: false,
                },
              },
            };
          }
          if (last.includes("toolu_png")) {
            return {
              toolUse: {
                id: "toolu_bash",
                name: "Bash",
                input: { command: "seq 1 60000", description: "numbers" },
              },
            };
          }
          return {
            toolUse: { id: "toolu_png", name: "Read", input: { file_path: join(first.cwd, "screen.png") } },
          };
        },
      });
      onTestFinished(() => mock.close());
      const allowed = ["--allowedTools", "Bash", "Agent", "Read"];
      const ran = await runClaude({
        cli,
        baseUrl: mock.url,
        ...first,
        prompt: "Count, then delegate.",
        extraArgs: allowed,
      });
      expect(ran.code, ran.report).toBe(0);
      const sessionId = ran.sessionId as string;

      // Captured as chunks into the deployment's blob store, which both containers reach.
      const blobs = createBlobStore({ store: createFsObjectStore({ root: join(root, "companion-blobs") }) });
      const captured = await captureSession({
        sessionId,
        cwd: first.cwd,
        configDir: join(first.home, ".claude"),
        blobs,
      });
      const paths = captured.manifest.files.map((file) => file.path).sort();
      // The layout of Claude Code 2.1.2 and later: <id>.jsonl and <id>/{subagents,tool-results}/.
      expect(paths).toContain(`${sessionId}.jsonl`);
      expect(paths.filter((path) => /^[^/]+\/subagents\/agent-[^/]+\.jsonl$/.test(path))).toHaveLength(1);
      expect(paths.filter((path) => /^[^/]+\/tool-results\/[^/]+\.txt$/.test(path))).toHaveLength(1);
      const projectDir = join(first.home, ".claude", "projects", captured.projectKey as string);
      const originals = new Map<string, Buffer>();
      for (const path of await filesUnder(projectDir))
        originals.set(path, await readFile(join(projectDir, path)));
      // The Read tool's two copies of the image, as Claude Code wrote them (one image, one base64).
      const images = readToolImages(originals.get(`${sessionId}.jsonl`)!.toString("utf8"));
      expect(images.content).toHaveLength(1);
      expect(images.toolUseResult).toEqual(images.content);
      const base64 = images.content[0]!;
      const image = Buffer.from(base64, "base64");
      // The image is in the blob store once, as its bytes; the capture (a manifest of chunk refs)
      // holds neither copy, and what it stored counts the image once.
      expect(await blobs.stat(createHash("sha256").update(image).digest("hex"))).toMatchObject({
        size: image.byteLength,
      });
      expect(captured.blobSizeBytes).toBeLessThan(base64.length);
      expect(captured.storedBytes).toBeLessThan(captured.rawSizeBytes - base64.length);
      await rm(first.home, { recursive: true });

      const second = await createAgentContainer(root, "companion-2");
      const into = { cwd: first.cwd, configDir: join(second.home, ".claude") };
      // A chunked capture: without the blob store it holds no session to restore.
      await expectStowageError(restoreSession(overTheWire(captured), into), "INVALID_INPUT", "CHUNKED_BLOB");
      const restored = await restoreSession(overTheWire(captured), { ...into, blobs });
      const restoredDir = restored.projectDir as string;
      expect(await filesUnder(restoredDir)).toEqual([...originals.keys()]);
      for (const [path, bytes] of originals) expect(await readFile(join(restoredDir, path))).toEqual(bytes);

      toolResultsFile = join(restoredDir, paths.find((path) => path.includes("/tool-results/")) as string);
      const before = mock.requests.length;
      const resumed = await runClaude({
        cli,
        baseUrl: mock.url,
        home: second.home,
        cwd: first.cwd,
        prompt: "What did the numbers end with?",
        resume: sessionId,
        extraArgs: allowed,
      });
      expect(resumed.code, resumed.report).toBe(0);
      const after = mock.requests.slice(before).map((request) => request.body as AnthropicRequest);
      // The earlier turns came back: the screenshot, the subagent's hand-back and the persisted-output marker.
      expect(after.some((request) => messagesText(request).includes(base64))).toBe(true);
      expect(after.some((request) => messagesText(request).includes("subagent says HERON-5"))).toBe(true);
      expect(after.some((request) => messagesText(request).includes("persisted-output"))).toBe(true);
      // And the restored tool-results file is readable where the resumed session looks for it.
      const readBack = after.find((request) =>
        JSON.stringify(request.messages?.at(-1) ?? "").includes("toolu_read"),
      );
      expect(JSON.stringify(readBack?.messages?.at(-1))).toContain("59999");
      expect(JSON.stringify(readBack?.messages?.at(-1))).toContain("60000");
    });
  },
);
