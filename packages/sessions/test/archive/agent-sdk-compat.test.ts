import { mkdir, realpath } from "node:fs/promises";
import { join } from "node:path";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { captureSession } from "../../src/archive/capture-session.js";
import { restoreSession } from "../../src/archive/restore-session.js";
import { realisticSessionTree } from "../../src/testing/realistic-session.js";
import { writeSessionTree } from "../../src/testing/write-session-tree.js";

// The Agent SDK reads CLAUDE_CONFIG_DIR once; this file runs in its own process (vitest forks).
const base = await tempDirectory("stowage-sdk-compat-");
const restoredConfig = join(base, "restored-config");
process.env.CLAUDE_CONFIG_DIR = restoredConfig;
const sdk = await import("@anthropic-ai/claude-agent-sdk");

describe("a restored session as the Claude Agent SDK sees it", () => {
  it("is listed under the working directory and its messages read back", async () => {
    await mkdir(join(base, "work", "My App_v2.0"), { recursive: true });
    const cwd = await realpath(join(base, "work", "My App_v2.0"));
    const sessionId = "5d6e7f80-91a2-4b3c-8d4e-5f60718293a4";
    const files = realisticSessionTree({ sessionId, cwd, mainBytes: 60_000, screenshotEvery: 0 });
    await writeSessionTree({ configDir: join(base, "source-config"), cwd, sessionId, files });
    const captured = await captureSession({ configDir: join(base, "source-config"), cwd, sessionId });
    await restoreSession(captured, { configDir: restoredConfig, cwd });

    const listed = await sdk.listSessions({ dir: cwd });
    expect(listed.map((session) => session.sessionId)).toEqual([sessionId]);
    const messages = await sdk.getSessionMessages(sessionId, { dir: cwd });
    const transcriptMessages = files
      .get(`${sessionId}.jsonl`)!
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; uuid?: string })
      .filter((entry) => entry.type === "user" || entry.type === "assistant");
    expect(messages.length).toBeGreaterThan(0);
    expect(messages.map((message) => message.uuid)).toEqual(transcriptMessages.map((entry) => entry.uuid));
  });
});
