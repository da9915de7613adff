import { mkdir, realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createBlobStore } from "@stowage/blob-store";
import { createMemoryNotifier, createMemoryObjectStore } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { countTokensExact, createMemoryPromptMetricsLog } from "@stowage/hot-state";
import { captureSession, createMemorySessionBlobRepository, restoreSession } from "@stowage/sessions";
import { createFsObjectStore } from "@stowage/storage-fs";
import { tempDirectory } from "@stowage/test-support";
import {
  createThreadFeeds,
  plainPostItem,
  textItem,
  toolCallItem,
  toolResultItem,
} from "@stowage/thread-items";
import { describe, expect, it } from "vitest";
import { createStowage, DEFAULT_STORES, requestHistory, sessionHistory } from "../../src/index.js";

const base = await tempDirectory("stowage-history-");
let sessions = 0;

/** A Claude Code session written where Claude Code writes it (projects/<key>/<id>.jsonl), by hand, then captured. */
async function capturedClaudeSession(
  fact: string,
  options: { blobs?: ReturnType<typeof createBlobStore> } = {},
) {
  const sessionId = `3b1f6a2e-8c4d-4e5f-9a0b-1c2d3e4f${String(sessions++).padStart(4, "0")}`;
  const cwd = join(base, `work-${sessionId}`);
  await mkdir(cwd, { recursive: true });
  const real = await realpath(cwd);
  const configDir = join(base, `config-${sessionId}`);
  // Claude Code's project key: the real path with every character outside [a-zA-Z0-9] made `-`.
  const project = join(configDir, "projects", real.replace(/[^a-zA-Z0-9]/g, "-"));
  await mkdir(project, { recursive: true });
  const common = { sessionId, cwd: real, version: "2.1.5", isSidechain: false };
  const lines = [
    {
      type: "user",
      uuid: "u1",
      parentUuid: null,
      ...common,
      message: { role: "user", content: `Remember: ${fact}` },
    },
    {
      type: "assistant",
      uuid: "a1",
      parentUuid: "u1",
      ...common,
      message: {
        role: "assistant",
        content: [
          { type: "text", text: "Noting it down." },
          { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "echo noted" } },
        ],
      },
    },
    {
      type: "user",
      uuid: "u2",
      parentUuid: "a1",
      ...common,
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "noted" }] },
    },
    {
      type: "assistant",
      uuid: "a2",
      parentUuid: "u2",
      ...common,
      message: { role: "assistant", content: [{ type: "text", text: `Remembered: ${fact}` }] },
    },
  ];
  await writeFile(
    join(project, `${sessionId}.jsonl`),
    `${lines.map((line) => JSON.stringify(line)).join("\n")}\n`,
  );
  return captureSession({
    configDir,
    cwd: real,
    sessionId,
    ...(options.blobs ? { blobs: options.blobs } : {}),
  });
}

/** One principal's sources, as a tenant has them. */
function sourcesOf(owner: string, repository = createMemorySessionBlobRepository()) {
  const blobs = createBlobStore({ store: createMemoryObjectStore() });
  return {
    repository,
    sources: {
      sessionBlobs: {
        list: (options?: { cursor?: string; limit?: number }) => repository.listByOwner(owner, options),
        getBySessionId: (sessionId: string) => repository.getBySessionId(owner, sessionId),
      },
      blobs,
      threads: createThreadFeeds({ store: createMemoryObjectStore(), notifier: createMemoryNotifier() }),
    },
  };
}

describe("sessionHistory: one stored session", () => {
  it("reads the main transcript through the adapter: messages, tool briefs, 50 messages in 20,000 tokens by default", async () => {
    const captured = await capturedClaudeSession("the launch code is ZEBRA-1187");
    const { repository, sources } = sourcesOf("user:alice");
    const record = await repository.create({
      ...captured,
      owner: "user:alice",
      requestId: "req-1",
      agentType: "claude-code",
    });
    const history = await sessionHistory(record, { blobs: sources.blobs });
    expect(history.messages).toEqual([
      { role: "user", kind: "text", text: "Remember: the launch code is ZEBRA-1187" },
      { role: "assistant", kind: "text", text: "Noting it down." },
      { role: "assistant", kind: "tool", text: "Bash → echo noted → noted (1 line)" },
      { role: "assistant", kind: "text", text: "Remembered: the launch code is ZEBRA-1187" },
    ]);
    expect(history.tokens).toBe(countTokensExact(history.text));
  });

  it("a capture kept as chunks reads from the principal's blobs", async () => {
    const { repository, sources } = sourcesOf("user:alice");
    const captured = await capturedClaudeSession("chunked fact CHUNK-77", { blobs: sources.blobs });
    const record = await repository.create({
      ...captured,
      owner: "user:alice",
      requestId: "req-1",
      agentType: "claude-code",
    });
    expect((await sessionHistory(record, { blobs: sources.blobs })).text).toContain("CHUNK-77");
    // Another principal's blob store has none of the chunks.
    const other = createBlobStore({ store: createMemoryObjectStore() });
    await expect(sessionHistory(record, { blobs: other })).rejects.toMatchObject({
      code: expect.any(String),
    });
  });
});

describe("sessionHistory: a Codex rollout", () => {
  it("reads the rollout's conversation (Codex's own record shapes, written by hand)", async () => {
    const sessionId = "019e1625-789d-76c0-80ab-3724b5ddb799";
    const codexHome = join(base, "codex-home");
    const day = join(codexHome, "sessions", "2026", "11", "29");
    await mkdir(day, { recursive: true });
    const at = "2026-11-29T10:00:00.000Z";
    const records = [
      { timestamp: at, type: "session_meta", payload: { id: sessionId, cwd: base, cli_version: "0.169.0" } },
      {
        timestamp: at,
        type: "response_item",
        payload: {
          type: "message",
          role: "user",
          content: [{ type: "input_text", text: "Remember: CODEX-FACT-8" }],
        },
      },
      {
        timestamp: at,
        type: "response_item",
        payload: {
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: "Noted CODEX-FACT-8." }],
        },
      },
    ];
    await writeFile(
      join(day, `rollout-2026-11-29T10-00-00-${sessionId}.jsonl`),
      `${records.map((record) => JSON.stringify(record)).join("\n")}\n`,
    );
    const captured = await captureSession({ agent: "codex", codexHome, sessionId });
    const { repository, sources } = sourcesOf("user:alice");
    const record = await repository.create({
      ...captured,
      owner: "user:alice",
      requestId: "req-x",
      agentType: "codex",
    });
    const history = await sessionHistory(record, { blobs: sources.blobs });
    expect(history.messages).toEqual([
      { role: "user", kind: "text", text: "Remember: CODEX-FACT-8" },
      { role: "assistant", kind: "text", text: "Noted CODEX-FACT-8." },
    ]);
  });
});

describe("requestHistory: the fallback when a stored session cannot be resumed", () => {
  it("a version mismatch refuses the restore, the history is still read from the same record", async () => {
    const captured = await capturedClaudeSession("the code word is PELICAN-42");
    const { repository, sources } = sourcesOf("user:alice");
    await repository.create({
      ...captured,
      owner: "user:alice",
      requestId: "req-v",
      agentType: "claude-code",
    });
    const latest = await repository.getLatestForRequest("user:alice", "req-v");
    await expectStowageError(
      restoreSession(latest!, { configDir: join(base, "restore-v"), cwd: base, agentVersion: "3.0.0" }),
      "CONFLICT",
      "AGENT_VERSION_MISMATCH",
    );
    const history = await requestHistory(sources, "req-v");
    expect(history.source).toMatchObject({
      kind: "stored-session",
      sessionId: captured.sessionId,
      agent: "claude-code",
    });
    expect(history.skipped).toEqual([]);
    expect(history.text).toContain("PELICAN-42");
  });

  it("a corrupt blob is skipped with its reason; an older readable session of the request gives the history", async () => {
    const { repository, sources } = sourcesOf("user:alice");
    const older = await capturedClaudeSession("the older fact OLD-1");
    await repository.create({ ...older, owner: "user:alice", requestId: "req-c", agentType: "claude-code" });
    await new Promise((resolve) => setTimeout(resolve, 5));
    const newer = await capturedClaudeSession("the newer fact NEW-2");
    await repository.create({ ...newer, owner: "user:alice", requestId: "req-c", agentType: "claude-code" });
    // The stored bytes damaged after they were stored (a repository refuses a bad blob at create).
    const corrupt = <R extends { sessionId: string; blob: Uint8Array } | null>(record: R): R => {
      if (!record || record.sessionId !== newer.sessionId) return record;
      const blob = new Uint8Array(record.blob);
      blob[blob.length - 40]! ^= 0xff;
      return { ...record, blob };
    };
    const damaged = {
      ...sources,
      sessionBlobs: {
        ...sources.sessionBlobs,
        getBySessionId: async (sessionId: string) =>
          corrupt(await sources.sessionBlobs.getBySessionId(sessionId)),
      },
    };
    const history = await requestHistory(damaged, "req-c");
    expect(history.source).toMatchObject({ kind: "stored-session", sessionId: older.sessionId });
    expect(history.text).toContain("OLD-1");
    expect(history.text).not.toContain("NEW-2");
    expect(history.skipped).toHaveLength(1);
    expect(history.skipped[0]).toMatchObject({ sessionId: newer.sessionId });
    expect(["INTEGRITY", "INVALID_INPUT"]).toContain(history.skipped[0]!.code);

    // Only the corrupt one: NOT_FOUND, saying what was tried.
    const only = sourcesOf("user:alice");
    await only.repository.create({
      ...newer,
      owner: "user:alice",
      requestId: "req-c",
      agentType: "claude-code",
    });
    const onlyDamaged = {
      ...only.sources,
      sessionBlobs: {
        ...only.sources.sessionBlobs,
        getBySessionId: async (sessionId: string) =>
          corrupt(await only.sources.sessionBlobs.getBySessionId(sessionId)),
      },
    };
    const err = await expectStowageError(requestHistory(onlyDamaged, "req-c"), "NOT_FOUND", "NO_HISTORY");
    expect(err.message).toContain(newer.sessionId);
  });

  it("nothing stored: NOT_FOUND; with a job, the job's thread gives the history", async () => {
    const { sources } = sourcesOf("user:alice");
    await expectStowageError(requestHistory(sources, "req-none"), "NOT_FOUND", "NO_HISTORY");
    const thread = { jobId: "job-1", alias: "main" };
    await sources.threads.post(thread, plainPostItem("Deploy with the key VIOLET-9"));
    await sources.threads.post(
      thread,
      toolCallItem({ name: "Bash", invocationId: "c1", input: { command: "make deploy" } }),
    );
    await sources.threads.post(thread, toolResultItem({ invocationId: "c1", output: "deployed\n" }));
    await sources.threads.post(thread, textItem("Deployed."));
    const history = await requestHistory(sources, "req-none", { job: "job-1" });
    expect(history.source).toEqual({ kind: "job-thread", jobId: "job-1", alias: "main" });
    expect(history.messages.map((message) => message.text)).toEqual([
      "Deploy with the key VIOLET-9",
      "Bash → make deploy → deployed (1 line)",
      "Deployed.",
    ]);
    await expectStowageError(
      requestHistory(sources, "req-none", { job: "job-2" }),
      "NOT_FOUND",
      "NO_HISTORY",
    );
  });

  it("another principal's request is NOT_FOUND, never its content", async () => {
    const repository = createMemorySessionBlobRepository();
    const captured = await capturedClaudeSession("alice's secret ALICE-SECRET");
    await repository.create({
      ...captured,
      owner: "user:alice",
      requestId: "req-a",
      agentType: "claude-code",
    });
    const bob = sourcesOf("user:bob", repository).sources;
    const err = await expectStowageError(requestHistory(bob, "req-a"), "NOT_FOUND", "NO_HISTORY");
    expect(JSON.stringify({ message: err.message, details: err.details })).not.toContain("ALICE-SECRET");
    expect((await requestHistory(sourcesOf("user:alice", repository).sources, "req-a")).text).toContain(
      "ALICE-SECRET",
    );
  });

  it("options pass through: maxMessages and a budget; bad ones are INVALID_INPUT", async () => {
    const captured = await capturedClaudeSession("fact FACT-3");
    const { repository, sources } = sourcesOf("user:alice");
    await repository.create({
      ...captured,
      owner: "user:alice",
      requestId: "req-o",
      agentType: "claude-code",
    });
    const two = await requestHistory(sources, "req-o", { maxMessages: 2 });
    expect(two.messages.map((message) => message.text)).toEqual([
      "Bash → echo noted → noted (1 line)",
      "Remembered: fact FACT-3",
    ]);
    expect(two.omitted).toBe(2);
    await expectStowageError(requestHistory(sources, "req-o", { maxMessages: 0 }), "INVALID_INPUT");
    await expectStowageError(requestHistory(sources, "req-o", { budgetTokens: -1 }), "INVALID_INPUT");
    const small = await requestHistory(sources, "req-o", { budgetTokens: 40 });
    expect(small.tokens).toBeLessThanOrEqual(40);
    expect(small.messages.at(-1)?.text).toBe("Remembered: fact FACT-3");
  });
});

describe("requestHistory over a tenant, as an embedder calls it", () => {
  it("a tenant is the sources: its stored sessions, its blobs and its job threads; another tenant sees none", async () => {
    await mkdir(join(base, "deployment", "agent-sessions"), { recursive: true });
    // A deployment without uploads: the table without their row.
    const { uploads: _uploads, ...stores } = DEFAULT_STORES;
    const stowage = createStowage({
      stores,
      shared: createFsObjectStore({ root: join(base, "deployment", "shared") }),
      notifier: createMemoryNotifier(),
      agentSessionsDir: join(base, "deployment", "agent-sessions"),
      sessionBlobs: createMemorySessionBlobRepository(),
      promptMetricsFor: () => createMemoryPromptMetricsLog(),
    });
    const alice = stowage.tenant({ kind: "user", id: "alice" });
    const captured = await capturedClaudeSession("TENANT-FACT-5");
    await alice.sessionBlobs.create({ ...captured, requestId: "req-t", agentType: "claude-code" });
    const history = await requestHistory(alice, "req-t");
    expect(history.source).toMatchObject({ kind: "stored-session", sessionId: captured.sessionId });
    expect(history.text).toContain("TENANT-FACT-5");

    await alice.threads.post({ jobId: "job-t", alias: "main" }, plainPostItem("thread fact THREAD-6"));
    expect((await requestHistory(alice, "req-none", { job: "job-t" })).text).toContain("THREAD-6");

    const bob = stowage.tenant({ kind: "user", id: "bob" });
    await expectStowageError(requestHistory(bob, "req-t"), "NOT_FOUND", "NO_HISTORY");
    await expectStowageError(requestHistory(bob, "req-none", { job: "job-t" }), "NOT_FOUND", "NO_HISTORY");
  });
});
