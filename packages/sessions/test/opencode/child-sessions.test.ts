import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { entryPathProblem } from "../../src/archive/entry-path.js";
import { restoreSession } from "../../src/archive/restore-session.js";
import { childSessionIds, exportParentId } from "../../src/opencode/child-sessions.js";
import { buildArchive } from "../build-archive.js";

// OpenCode 1.18 runs a `task` subagent in a session of its own: the parent's export names it in
// the task part's `state.metadata.sessionId`, the child's export names its parent in
// `info.parentID` (both seen with the real CLI in test/agent-environment-opencode.int.test.ts).
const base = await tempDirectory("stowage-opencode-children-");
const sessionId = "ses_dd940f170ffeuK7vmtw1fAD0O6";
const childId = "ses_dd940d45effeBP5Tn9eRHbyDNv";
const otherId = "ses_1a2b3c4d5e6fA7B8C9D0E1F2G3";
const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

const exportOf = (id: string, parentID?: string, children: unknown[] = []) => ({
  info: { id, ...(parentID === undefined ? {} : { parentID }), title: "t" },
  messages: [
    {
      info: { id: `msg_${id.slice(4)}`, sessionID: id, role: "assistant" },
      parts: children.map((metadata, index) => ({
        id: `prt_${index}${id.slice(4)}`,
        sessionID: id,
        messageID: `msg_${id.slice(4)}`,
        type: "tool",
        tool: "task",
        state: { status: "completed", metadata },
      })),
    },
  ],
});

describe("OpenCode child sessions", () => {
  it("are the task parts' metadata.sessionId, each once; a parent is info.parentID", () => {
    const parent = exportOf(sessionId, undefined, [
      { parentSessionId: sessionId, sessionId: childId },
      { sessionId: childId },
      { sessionId: "../etc" },
      { sessionId: 42 },
      null,
    ]);
    expect(childSessionIds(bytes(parent))).toEqual([childId]);
    expect(exportParentId(bytes(exportOf(childId, sessionId)))).toBe(sessionId);
    expect(exportParentId(bytes(exportOf(childId, "../x")))).toBeUndefined();
    expect(childSessionIds(new TextEncoder().encode("not json"))).toEqual([]);
    expect(exportParentId(new TextEncoder().encode("[1]"))).toBeUndefined();
  });

  it("entry paths: the session's export, then child sessions' <id>.json only", () => {
    expect(entryPathProblem(`${childId}.json`, sessionId, "opencode")).toBeUndefined();
    for (const path of ["../x.json", `${childId}.jsonl`, `${childId}/x.json`, ".json", "ses_x.json/"])
      expect(entryPathProblem(path, sessionId, "opencode"), path).toBeDefined();
  });

  it.each([
    ["a child whose parent is a session the archive does not hold", [exportOf(childId, otherId)]],
    ["a child that names no parent", [exportOf(childId)]],
    ["a child that is its own parent", [exportOf(childId, childId)]],
  ])("a restore refuses %s before importing anything", async (_why, children) => {
    const archive = await buildArchive({
      sessionId,
      files: [exportOf(sessionId), ...children].map((exported) => ({
        path: `${exported.info.id}.json`,
        content: bytes(exported),
      })),
      manifest: { agent: "opencode", projectKey: undefined },
    });
    // A CLI that does not exist: the archive is refused before it would be run.
    const error = await expectStowageError(
      restoreSession(archive, { opencode: { bin: join(base, "no-such-opencode") } }),
      "INVALID_INPUT",
    );
    expect(error.reason).toBe("FOREIGN_ENTRY");
  });

  it("a manifest that does not list the session's own export first is refused", async () => {
    const archive = await buildArchive({
      sessionId,
      files: [
        { path: `${childId}.json`, content: bytes(exportOf(childId, sessionId)) },
        { path: `${sessionId}.json`, content: bytes(exportOf(sessionId)) },
      ],
      manifest: { agent: "opencode", projectKey: undefined },
    });
    await expectStowageError(
      restoreSession(archive, { opencode: { bin: join(base, "no-such-opencode") } }),
      "INVALID_INPUT",
    );
  });
});
