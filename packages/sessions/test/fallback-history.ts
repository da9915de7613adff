import { chmod, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type LoggedRequest, type MockModelServer, requestsMention } from "@stowage/agent-clis";
import { runChild } from "@stowage/test-support";
import { expect } from "vitest";

// Document 002's fallback with the real CLIs, checked in each CLI's round-trip tests on the
// session they stored with the stowage CLI: restoring it is refused (the installed CLI a major
// version apart: AGENT_VERSION_MISMATCH), so `stowage session restore --fallback history` prints
// the conversation instead; a NEW session of the same real CLI started with that history in its
// prompt must send the fact to the model in its first request.

const STOWAGE_BIN = new URL("../../../apps/reference/src/bin.ts", import.meta.url);

/** An executable in `directory` that prints `line` for `--version`: the installed CLI, as restore sees it, one major version on. */
async function newerCli(directory: string, name: string, line: string): Promise<string> {
  const path = join(directory, "bin", name);
  await mkdir(join(directory, "bin"), { recursive: true });
  await writeFile(path, `#!${process.execPath}\nconsole.log(${JSON.stringify(line)});\n`);
  await chmod(path, 0o755);
  return path;
}

interface FallbackResult {
  history: { text: string; cause: { code: string; reason?: string } };
  /** The one stderr line saying why the fallback was used. */
  why: string | undefined;
}

/**
 * `stowage session restore … --fallback history --json` with the data directory `dataDir` (where
 * the session was stored): exit 0, the history as JSON, and the one stderr line saying why the fallback was used.
 */
async function restoreWithFallback(
  dataDir: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<FallbackResult> {
  const run = await runChild(
    STOWAGE_BIN,
    ["session", "restore", ...args, "--fallback", "history", "--json"],
    { env: { ...env, STOWAGE_DATA_DIR: dataDir } },
  );
  expect(run.code, run.stderr).toBe(0);
  const why = run.stderr.split("\n").find((line) => line.startsWith("fallback to history:"));
  return { history: JSON.parse(run.stdout) as FallbackResult["history"], why };
}

/** The refusal is the version mismatch, and the history holds the fact and the model's reply. */
function expectFallbackSeen(
  result: FallbackResult,
  expected: { fact: string; request: string; sessionId: string; agent: string },
) {
  expect(result.history.cause).toMatchObject({ code: "CONFLICT", reason: "AGENT_VERSION_MISMATCH" });
  expect(result.history.text).toContain(expected.fact);
  // The assistant's side too: the mock's reply in the first session is in the history.
  expect(result.history.text).toMatch(/Assistant:\nmock reply \d+/);
  expect(result.why).toMatch(
    new RegExp(
      `^fallback to history: restore of request ${expected.request} failed with CONFLICT AGENT_VERSION_MISMATCH; history of stored session ${expected.sessionId} \\(${expected.agent}\\)`,
    ),
  );
}

/** The question the new session is asked after the history. */
const QUESTION = "What is the launch code?";

/** The first request the model got that carries the prompt (a CLI may also ask for a title or count tokens). */
function firstPromptRequest(mock: MockModelServer, before: number): LoggedRequest | undefined {
  return mock.requests.slice(before).find((request) => requestsMention([request], QUESTION));
}

/**
 * Starts a NEW session with the history in its prompt (`start`, one real CLI run) and expects the
 * model's first request of it to carry `secret` and the earlier reply.
 */
async function expectNewSessionSees(
  mock: MockModelServer,
  history: string,
  expected: { earlierSessionId: string; secret: string },
  start: (prompt: string) => Promise<{ code: number | null; report: string; sessionId?: string | undefined }>,
) {
  const before = mock.requests.length;
  const fresh = await start(
    `${history}\n\nThe stored session could not be resumed; the conversation above is what was said. ${QUESTION}`,
  );
  expect(fresh.code, fresh.report).toBe(0);
  expect(fresh.sessionId).not.toBe(expected.earlierSessionId);
  const seen = firstPromptRequest(mock, before);
  expect(seen, "no request of the new session carried its prompt").toBeDefined();
  expect(requestsMention([seen!], expected.secret)).toBe(true);
  expect(requestsMention([seen!], "Assistant:\\nmock reply")).toBe(true);
}

export interface FallbackCase {
  /** The stowage data directory the told session was stored in. */
  dataDir: string;
  /** `session restore`'s arguments into a new container, without `--agent-cli`. */
  restoreArgs: readonly string[];
  /** The environment of that restore (its HOME is the new container's). */
  env: NodeJS.ProcessEnv;
  /** Where the fake newer CLI is written, its name, and what it prints for `--version`. */
  newerCli: { directory: string; name: string; versionLine: string };
  expected: { fact: string; secret: string; request: string; sessionId: string; agent: string };
  mock: MockModelServer;
  /** Starts a NEW session of the real CLI with `prompt` (one run). */
  start: (prompt: string) => Promise<{ code: number | null; report: string; sessionId?: string | undefined }>;
}

/**
 * The whole fallback with one CLI: the restore refused (the CLI a major version on), the history
 * printed with the reason, and a new session started with it whose model sees the fact.
 */
export async function expectFallbackReachesNewSession(fallback: FallbackCase): Promise<void> {
  const { newerCli: fake, expected } = fallback;
  const newer = await newerCli(fake.directory, fake.name, fake.versionLine);
  const result = await restoreWithFallback(
    fallback.dataDir,
    [...fallback.restoreArgs, "--agent-cli", newer],
    fallback.env,
  );
  expectFallbackSeen(result, expected);
  await expectNewSessionSees(
    fallback.mock,
    result.history.text,
    { earlierSessionId: expected.sessionId, secret: expected.secret },
    fallback.start,
  );
}
