// The agent whose session is captured owns Claude Code's config directory and Codex's home: while
// a capture runs it can swap a directory on the way to the session's files for a link to a
// directory of its choosing, laid out like a session, holding someone else's bytes. A worker
// thread does that in a tight loop while sessions are captured again and again; no capture may
// ever hold a byte of the outside copy.
import { createHash } from "node:crypto";
import { mkdir, realpath, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { startDirectorySwapper, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { captureSession } from "../../src/archive/capture-session.js";
import { claudeSessionLocation } from "../../src/claude/session-location.js";

const base = await tempDirectory("stowage-capture-race-");
const sessionId = "5d3c2b1a-0f9e-4d8c-b7a6-958473625140";

/** Bounds of each race: this many captures, or this long, whichever ends first. */
const MAX_CAPTURES = 2_000;
const MAX_RACE_MS = 5_000;

const line = (text: string) => `${JSON.stringify({ type: "user", sessionId, message: text })}\n`;
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** `files` (relative paths) written below `dir`. */
async function writeTree(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, ".."), { recursive: true });
    await writeFile(join(dir, path), text);
  }
}

/**
 * Captures until the bounds, tallying outcomes: `leaked` counts the captures that held a file whose
 * sha256 is one of `secrets` (the outside copy's files).
 */
async function race(capture: () => ReturnType<typeof captureSession>, secrets: readonly string[]) {
  const outcomes: Record<string, number> = {};
  let leaked = 0;
  const until = Date.now() + MAX_RACE_MS;
  for (let n = 0; n < MAX_CAPTURES && Date.now() < until; n++) {
    let outcome: string;
    try {
      const result = await capture();
      if (result.manifest.files.some((file) => secrets.includes(file.sha256))) leaked++;
      outcome = "captured";
    } catch (err) {
      outcome = `${(err as { code?: string }).code}/${(err as { reason?: string }).reason}`;
    }
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }
  return { outcomes, leaked };
}

describe("captureSession while a directory on the way is swapped for a link", () => {
  it("Claude Code: never captures the outside copy when the project directory is swapped", async () => {
    await mkdir(join(base, "work"));
    const cwd = await realpath(join(base, "work"));
    const configDir = join(base, "claude");
    const location = await claudeSessionLocation({ configDir, cwd, sessionId });
    const inside = {
      [`${sessionId}.jsonl`]: line("mine"),
      [`${sessionId}/tool-results/t.txt`]: "my tool output\n",
    };
    const outside = {
      [`${sessionId}.jsonl`]: line("SECRET transcript"),
      [`${sessionId}/tool-results/t.txt`]: "SECRET tool output\n",
    };
    await writeTree(location.projectDir, inside);
    const elsewhere = join(base, "elsewhere-claude");
    await writeTree(elsewhere, outside);

    const swapper = startDirectorySwapper({ directory: location.projectDir, outside: elsewhere });
    let result: Awaited<ReturnType<typeof race>>;
    let swaps = 0;
    try {
      const secrets = Object.values(outside).map(sha256);
      result = await race(() => captureSession({ configDir, cwd, sessionId, codec: "gzip" }), secrets);
    } finally {
      swaps = await swapper.stop();
      console.info(`Claude Code capture under ${swaps} swaps:`, result!);
    }
    expect(result.leaked).toBe(0);
    expect(result.outcomes.captured ?? 0).toBeGreaterThan(0);
    // It raced: the swapper ran, and some captures met the link (else the test proves nothing).
    expect(swaps).toBeGreaterThan(0);
    expect(result.outcomes.captured).toBeLessThan(Object.values(result.outcomes).reduce((a, b) => a + b, 0));
  });

  it("Codex: never captures the outside copy when the day folder is swapped", async () => {
    const codexHome = join(base, "codex");
    const name = `rollout-2026-01-02T03-04-05-${sessionId}.jsonl`;
    const dayDir = join(codexHome, "sessions", "2026", "01", "02");
    const rollout = `${JSON.stringify({ type: "session_meta", payload: { id: sessionId } })}\n`;
    await writeTree(dayDir, { [name]: rollout });
    const elsewhere = join(base, "elsewhere-codex");
    const secret = `${JSON.stringify({ type: "session_meta", payload: { id: sessionId, note: "SECRET" } })}\n`;
    await writeTree(elsewhere, { [name]: secret });

    const swapper = startDirectorySwapper({ directory: dayDir, outside: elsewhere });
    let result: Awaited<ReturnType<typeof race>>;
    let swaps = 0;
    try {
      result = await race(
        () => captureSession({ agent: "codex", codexHome, sessionId, codec: "gzip" }),
        [sha256(secret)],
      );
    } finally {
      swaps = await swapper.stop();
      console.info(`Codex capture under ${swaps} swaps:`, result!);
    }
    expect(result.leaked).toBe(0);
    expect(result.outcomes.captured ?? 0).toBeGreaterThan(0);
    // It raced: the swapper ran, and some captures met the link (else the test proves nothing).
    expect(swaps).toBeGreaterThan(0);
    expect(result.outcomes.captured).toBeLessThan(Object.values(result.outcomes).reduce((a, b) => a + b, 0));
  });

  it("refuses a project directory that is a link, however it got there (FORBIDDEN, SYMLINK_REFUSED)", async () => {
    const configDir = join(base, "claude-linked");
    const cwd = join(base, "work");
    const location = await claudeSessionLocation({ configDir, cwd: await realpath(cwd), sessionId });
    const elsewhere = join(base, "elsewhere-linked");
    await writeTree(elsewhere, { [`${sessionId}.jsonl`]: line("SECRET") });
    await mkdir(join(location.projectDir, ".."), { recursive: true });
    await symlink(elsewhere, location.projectDir);
    await expectStowageError(
      captureSession({ configDir, cwd: await realpath(cwd), sessionId }),
      "FORBIDDEN",
      "SYMLINK_REFUSED",
    );
  });
});
