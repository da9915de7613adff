import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { captureSession } from "../../src/archive/capture-session.js";
import { restoreSession } from "../../src/archive/restore-session.js";
import { rolloutSessionOf } from "../../src/codex/subagent-rollouts.js";
import { buildArchive } from "../build-archive.js";

// A Codex 0.169 session whose `spawn_agent` subagent runs as its own thread: its own rollout
// file, named by its own id, whose `session_meta` carries the parent's `session_id` and
// `parent_thread_id` (seen in test/agent-environment.int.test.ts). The subagent's rollout is the
// session's: captured with it, restored beside it; another session's never.
const base = await tempDirectory("stowage-codex-subagents-");
const sessionId = "01a226b6-8e16-7e13-90cc-0c2e39559978";
const childId = "01a226b6-8f92-7bb3-a357-476a6e59c9ab";
const laterChildId = "01a226b6-9999-7bb3-a357-476a6e59c9ab";
const otherId = "019e1695-0522-7c83-8b39-0dd379793f80";
const otherChildId = "019e1695-1111-7c83-8b39-0dd379793f80";

const text = (value: string) => new TextEncoder().encode(value);
/** A rollout: its `session_meta` (long base instructions, as Codex writes them), then a message. */
function rollout(id: string, session: string, parent?: string): string {
  const meta = {
    timestamp: "2026-11-29T09:50:28.251Z",
    ordinal: 0,
    type: "session_meta",
    payload: {
      session_id: session,
      id,
      ...(parent ? { parent_thread_id: parent, thread_source: "subagent" } : { thread_source: "user" }),
      cli_version: "0.169.0",
      base_instructions: { text: "You are a coding agent. ".repeat(3000) },
    },
  };
  const message = { type: "response_item", payload: { type: "message", role: "user", content: [] } };
  return `${JSON.stringify(meta)}\n${JSON.stringify(message)}\n`;
}
const path = (day: string, time: string, id: string) =>
  `2026/11/${day}/rollout-2026-11-${day}T${time}-${id}.jsonl`;

async function home(name: string, files: Record<string, string>): Promise<string> {
  const codexHome = join(base, name);
  for (const [relative, content] of Object.entries(files)) {
    await mkdir(dirname(join(codexHome, "sessions", relative)), { recursive: true });
    await writeFile(join(codexHome, "sessions", relative), content);
  }
  return codexHome;
}

describe("Codex: a session's subagent rollouts", () => {
  it("are captured with the session (not another session's, not one before it) and restored beside it", async () => {
    const own = path("29", "09-50-27", sessionId);
    const child = path("29", "09-50-28", childId);
    const laterChild = path("30", "00-00-01", laterChildId);
    const files = {
      [own]: rollout(sessionId, sessionId),
      [child]: rollout(childId, sessionId, sessionId),
      [laterChild]: rollout(laterChildId, sessionId, childId),
      // Another session's, and its subagent's; one before this session's day that names it.
      [path("29", "08-00-00", otherId)]: rollout(otherId, otherId),
      [path("29", "08-00-01", otherChildId)]: rollout(otherChildId, otherId, otherId),
      [path("28", "23-00-00", "01a226b6-0000-7bb3-a357-476a6e59c9ab")]: rollout(
        "01a226b6-0000-7bb3-a357-476a6e59c9ab",
        sessionId,
        sessionId,
      ),
    };
    const codexHome = await home("capture", files);
    // A link named like a subagent's rollout: never followed.
    await writeFile(join(base, "outside.jsonl"), rollout("x", sessionId));
    await symlink(
      join(base, "outside.jsonl"),
      join(codexHome, "sessions", path("29", "09-59-59", "01a226b6-5555-7bb3-a357-476a6e59c9ab")),
    );
    const captured = await captureSession({ agent: "codex", codexHome, sessionId });
    expect(captured.manifest.files.map((file) => file.path)).toEqual([own, child, laterChild]);
    const plain = await captureSession({ agent: "codex", codexHome, sessionId, includeSubagents: false });
    expect(plain.manifest.files.map((file) => file.path)).toEqual([own]);

    const target = await home("restore", { [path("29", "08-00-00", otherId)]: "theirs\n" });
    const restored = await restoreSession(captured, { codexHome: target });
    expect(restored.transcriptPath).toBe(join(target, "sessions", own));
    for (const relative of [own, child, laterChild]) {
      expect(await readFile(join(target, "sessions", relative), "utf8")).toBe(files[relative]);
    }
    expect(await readFile(join(target, "sessions", path("29", "08-00-00", otherId)), "utf8")).toBe(
      "theirs\n",
    );
    // Restored again over itself: its subagents' rollouts name it, so they are its own to replace.
    expect((await restoreSession(captured, { codexHome: target })).replaced).toEqual([
      own,
      child,
      laterChild,
    ]);
  });

  it("a restore never replaces another session's rollout at a subagent's path", async () => {
    const own = path("29", "09-50-27", sessionId);
    const child = path("29", "09-50-28", childId);
    const archive = await buildArchive({
      sessionId,
      files: [
        { path: own, content: text(rollout(sessionId, sessionId)) },
        { path: child, content: text(rollout(childId, sessionId, sessionId)) },
      ],
      manifest: { agent: "codex", projectKey: undefined },
    });
    for (const [why, content] of [
      ["another session's", rollout(childId, otherId, otherId)],
      ["one that names no session", "not json\n"],
    ] as const) {
      const target = await home(`foreign-${why.length}`, { [child]: content });
      const error = await expectStowageError(restoreSession(archive, { codexHome: target }), "INVALID_INPUT");
      expect(error.reason, why).toBe("FOREIGN_ENTRY");
      expect(await readFile(join(target, "sessions", child), "utf8")).toBe(content);
    }
  });

  it.each([
    ["a subagent's rollout first", (own: string, child: string) => [child, own]],
    ["two rollouts of the session itself", (own: string) => [own, path("29", "10-00-00", sessionId)]],
    ["a subagent path with an unsafe id", (own: string) => [own, path("29", "10-00-00", "..")]],
    [
      "a subagent path outside its day folder",
      (own: string) => [own, `2026/11/28/rollout-2026-11-29T10-00-00-${childId}.jsonl`],
    ],
  ])("a hostile manifest: %s", async (_why, paths) => {
    const own = path("29", "09-50-27", sessionId);
    const child = path("29", "09-50-28", childId);
    const archive = await buildArchive({
      sessionId,
      files: paths(own, child).map((entry) => ({
        path: entry,
        content: text(rollout(sessionId, sessionId)),
      })),
      manifest: { agent: "codex", projectKey: undefined },
    });
    const target = join(base, `hostile-${paths(own, child).join("").length}`);
    await expectStowageError(restoreSession(archive, { codexHome: target }), "INVALID_INPUT");
  });

  it("a rollout's session is its first line's session_meta session_id, nothing else", () => {
    expect(rolloutSessionOf(text(rollout(childId, sessionId, sessionId)))).toBe(sessionId);
    expect(rolloutSessionOf(text('{"type":"response_item","payload":{"session_id":"a"}}\n'))).toBeUndefined();
    expect(
      rolloutSessionOf(text('{"type":"session_meta","payload":{"session_id":"../x"}}\n')),
    ).toBeUndefined();
    expect(rolloutSessionOf(text('{"type":"session_meta","payload":{"session_id":"abc"'))).toBeUndefined();
    expect(rolloutSessionOf(text(""))).toBeUndefined();
  });
});
