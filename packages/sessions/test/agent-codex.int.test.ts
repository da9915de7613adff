import { createHash } from "node:crypto";
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  createAgentContainer,
  installAgentCli,
  requestsMention,
  runCodex,
  startResponsesMock,
} from "@stowage/agent-clis";
import { createBlobStore } from "@stowage/blob-store";
import { expectStowageError, seededRandom } from "@stowage/core/testing";
import { createFsObjectStore } from "@stowage/storage-fs";
import { encodePng, tempDirectory } from "@stowage/test-support";
import { describe, expect, it, onTestFinished } from "vitest";
import { captureSession, restoreSession } from "../src/index.js";
import { stowageJson } from "./agent-stowage-cli.js";
import { expectRecordedVersion, nextMajor } from "./agent-version-checks.js";
import { expectFallbackReachesNewSession } from "./fallback-history.js";
import { overTheWire } from "./over-the-wire.js";

// Capture → wipe the container → restore into a new one → resume, with the real Codex CLI
// against a mock Responses API: the resumed request must carry the earlier conversation.
const cli = await installAgentCli("codex");
const root = await tempDirectory("stowage-e2e-codex-");

/** Real CLI runs take seconds each, many more on a loaded machine. */
const TIMEOUT_MS = 600_000;

const FACT = "the launch code is ZEBRA-1187";
/** The request the told session is stored under with the stowage CLI. */
const REQUEST = "req-codex";
const requestArgs = ["--user", "alice", "--request", REQUEST];

let stored: Promise<{ sessionId: string; dataDir: string }> | undefined;

/**
 * One real session told {@link FACT} and stored with `stowage session capture --agent codex` in a
 * data directory of this file's, its HOME wiped: what the CLI round trip and the fallback restore.
 * Once per file: each Codex run is seconds of CPU.
 */
function storedOnce(): Promise<{ sessionId: string; dataDir: string }> {
  stored ??= (async () => {
    if (!cli.ready) throw new Error(cli.reason);
    const mock = await startResponsesMock();
    try {
      const first = await createAgentContainer(root, "told");
      const told = await runCodex({ cli, baseUrl: mock.url, ...first, prompt: `Remember: ${FACT}.` });
      expect(told.code, told.report).toBe(0);
      const sessionId = told.sessionId as string;
      const dataDir = join(root, "stowage-data");
      const env = { PATH: process.env.PATH, HOME: first.home };
      const codexHome = join(first.home, ".codex");
      const capture = ["session", "capture", "--agent", "codex", ...requestArgs, "--session", sessionId];
      const captured = await stowageJson(dataDir, [...capture, "--codex-home", codexHome], env);
      expect(captured).toMatchObject({
        sessionId,
        agentType: "codex",
        agentVersion: cli.ready && cli.version,
      });
      await rm(first.home, { recursive: true });
      return { sessionId, dataDir };
    } finally {
      await mock.close();
    }
  })();
  return stored;
}

/** The rollouts below `<home>/.codex/sessions`, as `YYYY/MM/DD/rollout-….jsonl` paths. */
async function rollouts(home: string): Promise<string[]> {
  const sessions = join(home, ".codex", "sessions");
  return (await readdir(sessions, { recursive: true })).filter((path) => path.endsWith(".jsonl")).sort();
}

/** A 400x250 screenshot-like PNG: rows of text-like pixels, so that it is tens of KB like a real one. */
function screenshot(): Buffer {
  const random = seededRandom(29);
  return encodePng(400, 250, (x, y) =>
    y % 12 < 6 && x % 200 < 180 && random() < 0.4 ? [40, 40, 40] : [255, 255, 255],
  );
}

/**
 * The data URLs of images in a rollout's user messages: `response_item` messages whose content
 * has `input_image` items (Codex 0.169 writes an image attached with `--image` there; its events
 * name the local path only).
 */
function userImages(rollout: string): string[] {
  return rollout
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((record) => record.type === "response_item" && record.payload?.role === "user")
    .flatMap((record) => record.payload.content ?? [])
    .filter((item) => item?.type === "input_image" && typeof item.image_url === "string")
    .map((item) => item.image_url as string);
}

describe.skipIf(!cli.ready)(
  "Codex sessions captured, restored into a new HOME and resumed",
  { timeout: TIMEOUT_MS },
  () => {
    it("resumes a rollout captured as chunks, its attached screenshot kept once in a blob store: the model sees the fact and the image told before the wipe", async () => {
      const mock = await startResponsesMock();
      onTestFinished(() => mock.close());
      const first = await createAgentContainer(root, "fact-1");
      await writeFile(join(first.cwd, "screen.png"), screenshot());
      const told = await runCodex({
        cli,
        baseUrl: mock.url,
        ...first,
        prompt: "Remember: the launch code is ZEBRA-1187.",
        extraArgs: ["--image", join(first.cwd, "screen.png")],
      });
      expect(told.code, told.report).toBe(0);
      const sessionId = told.sessionId as string;
      const [rollout] = await rollouts(first.home);
      const original = await readFile(join(first.home, ".codex", "sessions", rollout as string));
      // Codex wrote the attachment into the user's message as a data URL.
      const [dataUrl] = userImages(original.toString("utf8"));
      expect(dataUrl).toMatch(/^data:image\/[a-z]+;base64,/);
      const base64 = dataUrl!.slice(dataUrl!.indexOf(",") + 1);
      const image = Buffer.from(base64, "base64");

      // Captured as chunks into the deployment's blob store, which both containers reach.
      const blobs = createBlobStore({ store: createFsObjectStore({ root: join(root, "fact-blobs") }) });
      const captured = await captureSession({
        agent: "codex",
        sessionId,
        codexHome: join(first.home, ".codex"),
        blobs,
      });
      expect(captured.agent).toBe("codex");
      // The image is in the blob store as its bytes; the capture (a manifest of chunk refs) holds no copy.
      expect(await blobs.stat(createHash("sha256").update(image).digest("hex"))).toMatchObject({
        size: image.byteLength,
      });
      expect(captured.blobSizeBytes).toBeLessThan(base64.length);
      await rm(first.home, { recursive: true });

      const second = await createAgentContainer(root, "fact-2");
      const into = { codexHome: join(second.home, ".codex") };
      // A chunked capture: without the blob store it holds no session to restore.
      await expectStowageError(restoreSession(overTheWire(captured), into), "INVALID_INPUT", "CHUNKED_BLOB");
      const restored = await restoreSession(overTheWire(captured), { ...into, blobs });
      expect(restored.agent).toBe("codex");
      // Back under the same relative path, byte for byte.
      expect(await rollouts(second.home)).toEqual([rollout]);
      expect(await readFile(join(second.home, ".codex", "sessions", rollout as string))).toEqual(original);

      const before = mock.requests.length;
      const resumed = await runCodex({
        cli,
        baseUrl: mock.url,
        ...second,
        prompt: "What is the launch code?",
        resume: sessionId,
      });
      expect(resumed.code, resumed.report).toBe(0);
      expect(resumed.sessionId).toBe(sessionId);
      const after = mock.requests.slice(before);
      expect(requestsMention(after, "What is the launch code?")).toBe(true);
      expect(requestsMention(after, "ZEBRA-1187")).toBe(true);
      expect(requestsMention(after, base64)).toBe(true);
      expect(requestsMention(after, "mock reply 0: received")).toBe(true);
    });

    it("of two sessions in one day folder, brings back only the captured one", async () => {
      if (!cli.ready) throw new Error(cli.reason);
      const mock = await startResponsesMock();
      onTestFinished(() => mock.close());
      const first = await createAgentContainer(root, "two-1");
      const kept = await runCodex({
        cli,
        baseUrl: mock.url,
        ...first,
        prompt: "Remember: the kept word is OTTER-31.",
      });
      const other = await runCodex({
        cli,
        baseUrl: mock.url,
        ...first,
        prompt: "Remember: the other word is LYNX-77.",
      });
      expect(kept.code, kept.report).toBe(0);
      expect(other.code, other.report).toBe(0);
      expect(other.sessionId).not.toBe(kept.sessionId);
      const both = await rollouts(first.home);
      expect(both).toHaveLength(2);
      // Same day folder (runs seconds apart; a test started just before midnight could split them).
      const dayOf = (path: string) => path.split("/").slice(0, 3).join("/");
      const keptRollout = both.find((path) => path.endsWith(`-${kept.sessionId}.jsonl`)) as string;
      expect(both.map(dayOf)).toEqual([dayOf(keptRollout), dayOf(keptRollout)]);

      const captured = await captureSession({
        agent: "codex",
        sessionId: kept.sessionId as string,
        codexHome: join(first.home, ".codex"),
      });
      expect(captured.manifest.files.map((file) => file.path)).toEqual([keptRollout]);
      // The rollout's cli_version is the installed CLI's `--version`.
      const output = await expectRecordedVersion(cli, captured, { PATH: process.env.PATH, HOME: first.home });
      await rm(first.home, { recursive: true });

      const second = await createAgentContainer(root, "two-2");
      const into = { codexHome: join(second.home, ".codex") };
      await expectStowageError(
        restoreSession(overTheWire(captured), {
          ...into,
          agentVersion: `codex-cli ${nextMajor(cli.version)}`,
        }),
        "CONFLICT",
        "AGENT_VERSION_MISMATCH",
      );
      const restored = await restoreSession(overTheWire(captured), { ...into, agentVersion: output });
      expect(restored.agentVersionCheck).toEqual({ verdict: "same", version: cli.version });
      expect(await rollouts(second.home)).toEqual([keptRollout]);

      const before = mock.requests.length;
      const resumed = await runCodex({
        cli,
        baseUrl: mock.url,
        ...second,
        prompt: "Which word did I give you?",
        resume: kept.sessionId,
      });
      expect(resumed.code, resumed.report).toBe(0);
      const after = mock.requests.slice(before);
      expect(requestsMention(after, "OTTER-31")).toBe(true);
      expect(requestsMention(after, "LYNX-77")).toBe(false);
    });

    it("round-trips through the stowage CLI: session capture --agent codex, wipe, session restore, resume", async () => {
      if (!cli.ready) throw new Error(cli.reason);
      const mock = await startResponsesMock();
      onTestFinished(() => mock.close());
      const { sessionId, dataDir } = await storedOnce();

      const second = await createAgentContainer(root, "cli-2");
      // `codex.js` is the executable npm installs as `codex` (it starts the platform binary).
      const codexJs = cli.args[0] as string;
      expect(codexJs).toMatch(/codex\.js$/);
      // No --agent: the stored session says it is Codex's. With --agent-cli, that CLI's
      // `--version` is checked against the one the rollout recorded.
      const restored = await stowageJson(
        dataDir,
        [
          "session",
          "restore",
          ...requestArgs,
          "--codex-home",
          join(second.home, ".codex"),
          "--agent-cli",
          codexJs,
        ],
        { PATH: process.env.PATH, HOME: second.home },
      );
      expect(restored).toMatchObject({ sessionId, agentType: "codex" });
      expect(restored.versionCheck).toEqual({ verdict: "same", version: cli.version });

      const before = mock.requests.length;
      const resumed = await runCodex({
        cli,
        baseUrl: mock.url,
        ...second,
        prompt: "What is the launch code?",
        resume: sessionId,
      });
      expect(resumed.code, resumed.report).toBe(0);
      expect(requestsMention(mock.requests.slice(before), "ZEBRA-1187")).toBe(true);
    });

    it("falls back to the history when the restore is refused: a new session's model sees the fact", async () => {
      if (!cli.ready) throw new Error(cli.reason);
      const mock = await startResponsesMock();
      onTestFinished(() => mock.close());
      const { sessionId, dataDir } = await storedOnce();

      const second = await createAgentContainer(root, "fallback-2");
      await expectFallbackReachesNewSession({
        dataDir,
        restoreArgs: [...requestArgs, "--codex-home", join(second.home, ".codex")],
        env: { PATH: process.env.PATH, HOME: second.home },
        newerCli: { directory: root, name: "codex-next", versionLine: `codex-cli ${nextMajor(cli.version)}` },
        expected: { fact: FACT, secret: "ZEBRA-1187", request: REQUEST, sessionId, agent: "codex" },
        mock,
        start: (prompt) => runCodex({ cli, baseUrl: mock.url, ...second, prompt }),
      });
    });
  },
);
