// The scripted agent run of `stowage demo`: every step goes through the real HTTP API of a running
// server (or the packages an agent itself uses on its own machine), and is checked.
import { randomUUID } from "node:crypto";
import { appendFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createOutputSink } from "@stowage/artifacts";
import { type BlobPutResult, prepareEntryForPersistence } from "@stowage/blob-store";
import { StowageError } from "@stowage/core";
import { captureSession, fromTransport, restoreSession, toTransport } from "@stowage/sessions";
import {
  plainPostItem,
  statusItem,
  type ThreadItem,
  textItem,
  thinkingItem,
  toolCallItem,
  toolResultItem,
  turnEndItem,
} from "@stowage/thread-items";
import { uploadFile } from "@stowage/uploads/agent";
import type { RunningServer } from "../http/server.js";
import { apiClient } from "./api-client.js";
import { snapshot, writeCodexRollout, writeContainerSession } from "./container-session.js";
import { type DispatcherTurns, runDispatcherTurns } from "./dispatcher-turns.js";
import { demoScreenshot } from "./screenshot.js";

/** Size of the demo's long tool output: big enough to be truncated in its thread item. */
export const DEMO_TOOL_OUTPUT_BYTES = 2 * 1024 * 1024;

export interface DemoResult {
  apiKey: string;
  agentSessionId: string;
  thread: { jobId: string; alias: string };
  viewerUrl: string;
  lines: string[];
  /** The dispatcher's hot state and the metrics of its model calls. */
  hotState: DispatcherTurns;
}

function check(condition: unknown, what: string): asserts condition {
  if (!condition) throw new StowageError("INTERNAL", `demo check failed: ${what}`);
}

function longTestOutput(): string {
  const lines: string[] = [];
  let bytes = 0;
  for (let i = 0; bytes < DEMO_TOOL_OUTPUT_BYTES; i++) {
    const line = `  ✓ parser › case ${String(i).padStart(6, "0")} parses nested expressions without backtracking (${(i % 97) + 1} ms)`;
    lines.push(line);
    bytes += Buffer.byteLength(line) + 1;
  }
  const passed = lines.length;
  lines.push(
    "  ✗ parser › handles a trailing comma in argument lists",
    "",
    `Tests: 1 failed, ${passed.toLocaleString("en-US")} passed`,
  );
  return `${lines.join("\n")}\n`;
}

export async function runDemo(server: RunningServer, say: (line: string) => void): Promise<DemoResult> {
  const { services } = server;
  const lines: string[] = [];
  const step = (line: string) => {
    lines.push(line);
    say(line);
  };

  // 1. An API key for the demo user (what `stowage keys create --user demo` does).
  const { apiKey } = await services.apiKeys.issue({ kind: "user", id: "demo" }, { label: "stowage demo" });
  const api = apiClient(server.url, apiKey);
  step("1. issued an API key for user demo (only its hash is stored)");

  // 2. The agent's session, registered in user demo's namespace (uploads and reads need it). The
  // agent runs beside the server here, so it writes its artifacts straight into that session.
  const agentSessionId = randomUUID();
  await api.post("/agents/sessions", { sessionId: agentSessionId });
  const session = await services.tenant({ kind: "user", id: "demo" }).agentSessions.get(agentSessionId);
  step(`2. started agent session ${agentSessionId}`);

  // The job's thread is keyed by the agent session, so the viewer can resolve its artifact:// links.
  const thread = { jobId: agentSessionId, alias: "main" };
  const post = async (item: ThreadItem) =>
    (await api.post<{ item: ThreadItem }>(`/threads/${thread.jobId}/${thread.alias}/items`, item)).item;

  // 3. A run's thread items, each logged in full by the server before it is fitted and posted.
  await post(plainPostItem("The parser rejects trailing commas in argument lists; please fix it."));
  await post(
    thinkingItem(
      "The user reports a parser failure with trailing commas. I should run the test suite first to see which case fails, then read parser.ts around argument parsing.",
    ),
  );
  await post(toolCallItem({ name: "Bash", invocationId: "call-tests", input: { command: "npm test" } }));

  // The tool's 2 MiB of output streams through an OutputSink: the model keeps the tail, the full
  // output spills to artifact://<id>.
  const output = longTestOutput();
  const sink = createOutputSink({ artifacts: session.artifacts, toolType: "bash" });
  let summary: Awaited<ReturnType<typeof sink.dump>>;
  try {
    for (let offset = 0; offset < output.length; offset += 64 * 1024)
      await sink.push(output.slice(offset, offset + 64 * 1024));
    summary = await sink.dump();
  } finally {
    await sink.dispose();
  }
  check(summary.artifactId !== undefined, "the long output was saved as an artifact");
  const result = await post(toolResultItem({ invocationId: "call-tests", output, isError: true }));
  const metadata = result.metadata as { truncated?: boolean; local_log?: string };
  check(metadata.truncated === true, "the 2 MiB tool result was truncated to fit the thread budget");
  step(
    `3. posted thread items to ${thread.jobId}/${thread.alias}; the ${(Buffer.byteLength(output) / 1024 / 1024).toFixed(1)} MiB ` +
      `tool result was cut to ${(Buffer.byteLength(JSON.stringify(result)) / 1024).toFixed(0)} KiB (full payload in ${metadata.local_log}), ` +
      `and the tool output is artifact://${summary.artifactId} (${summary.totalLines} lines)`,
  );
  const tail = await api.get<{ text: string }>(
    `/sessions/${agentSessionId}/artifact/${summary.artifactId}?offset=${summary.totalLines - 2}&limit=3`,
  );
  check(tail.text.includes("Tests: 1 failed"), "artifact:// paging returns the last lines");
  await post(
    textItem(
      `The full output is artifact://${summary.artifactId}; its last lines say: ${tail.text.trim().split("\n").at(-1)}`,
    ),
  );
  step(
    `4. read the last lines back through artifact://${summary.artifactId}: "${tail.text.trim().split("\n").at(-1)}"`,
  );

  // 4. A screenshot in a session entry moves to the blob store (over HTTP); the entry keeps its ref.
  const screenshot = demoScreenshot();
  const blobs = {
    put: async (bytes: Uint8Array | ReadableStream<Uint8Array>) => {
      check(bytes instanceof Uint8Array, "images arrive as bytes");
      return api.postBytes<BlobPutResult>("/blobs", bytes);
    },
  };
  const entry = {
    type: "message",
    id: randomUUID(),
    message: {
      role: "toolResult",
      toolName: "browser_screenshot",
      content: [{ type: "image", mimeType: "image/png", data: screenshot.toString("base64") }],
    },
  };
  const persisted = await prepareEntryForPersistence(entry, { blobs });
  const ref = (persisted.message.content[0] as { data: string }).data;
  await appendFile(session.sessionFile, `${JSON.stringify(persisted)}\n`);
  await post(
    toolCallItem({
      name: "browser_screenshot",
      invocationId: "call-shot",
      input: { url: "http://localhost:5173/" },
    }),
  );
  await post(toolResultItem({ invocationId: "call-shot", output: `Screenshot of the failing page: ${ref}` }));
  step(`5. externalized a ${screenshot.byteLength}-byte screenshot from the session entry to ${ref}`);

  // 5. A subagent's output, read back by query through agent://.
  const explore = await session.artifacts.allocateAgentOutput("Explore");
  await session.artifacts.writeAgentOutput(
    explore.outputId,
    JSON.stringify(
      {
        summary: "argument lists are parsed in parseArguments()",
        findings: [{ file: "src/parser.ts", line: 212 }],
      },
      null,
      2,
    ),
  );
  await post(
    toolCallItem({
      name: "Task",
      invocationId: "call-explore",
      input: { description: "Explore the parser", subagent_type: "Explore" },
    }),
  );
  await post(toolResultItem({ invocationId: "call-explore", output: `agent://${explore.outputId}` }));
  const finding = await api.get<{ text: string }>(
    `/sessions/${agentSessionId}/agent/${explore.outputId}?q=.findings[0].file`,
  );
  check(finding.text.includes("src/parser.ts"), "agent:// query extraction");
  step(
    `6. read the subagent's finding through agent://${explore.outputId}?q=.findings[0].file → ${finding.text.trim()}`,
  );

  // 6. An upload through a signed URL, the way an agent in a remote devbox does it.
  const workDir = await mkdtemp(join(tmpdir(), "stowage-demo-"));
  try {
    const shotPath = join(workDir, "failing-page.png");
    await writeFile(shotPath, screenshot);
    const uploaded = await uploadFile({
      apiBase: server.url,
      apiKey,
      sessionId: agentSessionId,
      filePath: shotPath,
    });
    check(uploaded.success, `upload succeeded (${uploaded.error})`);
    // The documented upload API keeps the design document's words (`/artifacts`, `{ artifacts }`).
    const listed = await api.get<{ artifacts: { filename: string; sizeFormatted: string }[] }>(
      `/agents/${agentSessionId}/artifacts`,
    );
    const download = await api.get<{ url: string }>(
      `/agents/${agentSessionId}/artifacts/failing-page.png/download`,
    );
    const downloaded = Buffer.from(await (await fetch(download.url)).arrayBuffer());
    check(downloaded.equals(screenshot), "the download is the uploaded file");
    step(
      `7. uploaded failing-page.png through a signed URL (size, type and SHA-256 bound); the session lists ` +
        `${listed.artifacts.map((a) => `${a.filename} (${a.sizeFormatted})`).join(", ")} and its download URL returns the same bytes`,
    );

    // 7. The "container" ends: its Claude Code session is captured and stored with a TTL…
    await post(statusItem({ status: "capturing_session", detail: "container run finished" }));
    await post(
      turnEndItem({
        inputTokens: 48_210,
        inputTokensCached: 41_000,
        outputTokens: 3_912,
        durationMs: 94_500,
      }),
    );
    const configDir = join(workDir, "container", ".claude");
    const cwd = join(workDir, "container", "workspace");
    // The container's Claude Code session is the agent session above: the viewer shows what was stored of it.
    const container = await writeContainerSession({ configDir, cwd, turns: 200, sessionId: agentSessionId });
    const before = await snapshot(container.projectDir);
    const captured = await captureSession({ configDir, cwd, sessionId: container.sessionId });
    const requestId = `demo-request-${agentSessionId.slice(0, 8)}`;
    // The transport carries the agent (agentType: "claude-code"); the server records it.
    const stored = await api.post<{
      agentType: string;
      codec: string;
      rawSizeBytes: number;
      blobSizeBytes: number;
    }>(`/requests/${requestId}/session-blobs`, toTransport(captured));
    step(
      `8. captured the container's ${stored.agentType} session ${container.sessionId} (${container.files.length} files, ${stored.rawSizeBytes} bytes) ` +
        `and stored it as ${stored.blobSizeBytes} bytes of ${stored.codec} for request ${requestId}`,
    );

    // …the container is wiped, and a fresh one restores the session before resuming.
    await rm(join(workDir, "container"), { recursive: true, force: true });
    const latest = await api.get<Record<string, unknown>>(`/requests/${requestId}/session-blobs/latest`);
    const freshConfig = join(workDir, "fresh", ".claude");
    const restored = await restoreSession(fromTransport(latest), { configDir: freshConfig, cwd });
    const after = await snapshot(restored.directory!);
    check(after.size === before.size, "every file came back");
    for (const [path, bytes] of before)
      check(after.get(path)?.equals(bytes), `${path} is identical after restore`);
    step(
      `9. wiped the container, restored the ${restored.agent} session into a fresh one: ${after.size} files, byte for byte identical`,
    );

    // A second container ran Codex to review the fix: its rollout is stored the same way, with
    // its own agent type, so the viewer lists stored sessions of two agents.
    const codexHome = join(workDir, "reviewer", ".codex");
    const review = await writeCodexRollout({ codexHome, startedAt: new Date() });
    const reviewed = await captureSession({ agent: "codex", codexHome, sessionId: review.sessionId });
    const reviewRequest = `demo-review-${agentSessionId.slice(0, 8)}`;
    const storedReview = await api.post<{ agentType: string; rawSizeBytes: number }>(
      `/requests/${reviewRequest}/session-blobs`,
      toTransport(reviewed),
    );
    check(storedReview.agentType === "codex", "the Codex session is stored as one");
    step(
      `10. captured a reviewer container's ${storedReview.agentType} session ${review.sessionId} (its rollout ${review.relativePath}, ` +
        `${storedReview.rawSizeBytes} bytes) and stored it for request ${reviewRequest}`,
    );
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }

  // 9. The dispatcher kept a hot state across its model calls; each call's prompt was measured.
  const hotState = await runDispatcherTurns(
    api,
    services.tenant({ kind: "user", id: "demo" }).registry,
    agentSessionId,
    output,
  );
  const violations = hotState.turns.filter((turn) => !turn.record.budget_ok).map((turn) => turn.turn);
  check(violations.length === 1, "exactly the forced turn violates the budget");
  check(hotState.conflict === "CONFLICT", "a stale dispatcher's write is refused");
  step(
    `11. the dispatcher kept its hot state through ${hotState.versions} versions (each carrying the previous one's hash; ` +
      `a stale dispatcher got ${hotState.conflict}) and measured ${hotState.turns.length} model calls: ` +
      `hot state ${Math.max(...hotState.turns.map((turn) => turn.record.hs_tokens))} tokens at most, ` +
      `turn ${violations.join(", ")} over the prompt budget`,
  );

  const viewerUrl = `${services.config.publicUrl}/#key=${encodeURIComponent(apiKey)}&session=${agentSessionId}`;
  return { apiKey, agentSessionId, thread, viewerUrl, lines, hotState };
}
