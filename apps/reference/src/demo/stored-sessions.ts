// Steps 8 to 10 of the demo: a container's agent sessions captured, stored through the API,
// and restored byte for byte into a fresh container.
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { captureSession, fromTransport, restoreSession, toTransport } from "@stowage/sessions";
import { statusItem, turnEndItem } from "@stowage/thread-items";
import { snapshot, writeCodexRollout, writeContainerSession } from "./container-session.js";
import { check, type DemoRun } from "./demo-run.js";

/**
 * Step 8: the "container" ends; its Claude Code session (the run's agent session) is captured and
 * stored with a TTL. Step 9: the container is wiped, and a fresh one restores the session before
 * resuming.
 */
async function storeAndRestoreContainerSession(run: DemoRun, workDir: string): Promise<void> {
  const { api, agentSessionId, post, step } = run;
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
    storedBytes: number;
  }>(`/requests/${requestId}/session-blobs`, toTransport(captured));
  step(
    `8. captured the container's ${stored.agentType} session ${container.sessionId} (${container.files.length} files, ${stored.rawSizeBytes} bytes) ` +
      `and stored it for request ${requestId} as chunks in the principal's blobs: ${stored.storedBytes} bytes new to storage`,
  );

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
}

/**
 * Step 10: a second container ran Codex to review the fix: its rollout is stored the same way,
 * with its own agent type, so the viewer lists stored sessions of two agents.
 */
async function storeReviewerSession(run: DemoRun, workDir: string): Promise<void> {
  const codexHome = join(workDir, "reviewer", ".codex");
  const review = await writeCodexRollout({ codexHome, startedAt: new Date() });
  const reviewed = await captureSession({ agent: "codex", codexHome, sessionId: review.sessionId });
  const reviewRequest = `demo-review-${run.agentSessionId.slice(0, 8)}`;
  const storedReview = await run.api.post<{ agentType: string; rawSizeBytes: number }>(
    `/requests/${reviewRequest}/session-blobs`,
    toTransport(reviewed),
  );
  check(storedReview.agentType === "codex", "the Codex session is stored as one");
  run.step(
    `10. captured a reviewer container's ${storedReview.agentType} session ${review.sessionId} (its rollout ${review.relativePath}, ` +
      `${storedReview.rawSizeBytes} bytes) and stored it for request ${reviewRequest}`,
  );
}

/** Steps 8 to 10, in containers made below `workDir`. */
export async function storeContainerSessions(run: DemoRun, workDir: string): Promise<void> {
  await storeAndRestoreContainerSession(run, workDir);
  await storeReviewerSession(run, workDir);
}
