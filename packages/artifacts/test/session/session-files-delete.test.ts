import { readdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expectStowageError, HOSTILE_KEYS } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { createSessionFiles } from "../../src/session/session-files.js";

describe("SessionFiles.delete", () => {
  it("removes a session's file and its artifacts, and no other session's", async () => {
    const dir = await tempDirectory("stowage-session-delete-");
    const sessions = createSessionFiles({ dir });
    const doomed = await sessions.create("s-1", new Date("2026-01-01T10:00:00Z"));
    await doomed.artifacts.saveArtifact("bash", "npm test\n");
    const kept = await sessions.create("s-2", new Date("2026-01-01T11:00:00Z"));
    await kept.artifacts.saveArtifact("bash", "kept\n");
    expect(await sessions.delete("s-1")).toBe(true);
    expect((await readdir(dir)).sort()).toEqual([
      "2026-01-01T11-00-00-000Z_s-2",
      "2026-01-01T11-00-00-000Z_s-2.jsonl",
    ]);
    await expectStowageError(() => sessions.get("s-1"), "NOT_FOUND", "SESSION_NOT_FOUND");
    expect(await sessions.delete("s-1")).toBe(false);
    // The id can be used again.
    expect((await sessions.create("s-1")).sessionId).toBe("s-1");
  });

  it("removes a link planted as the artifacts directory without following it", async () => {
    const dir = await tempDirectory("stowage-session-delete-");
    const outside = await tempDirectory("stowage-session-outside-");
    await writeFile(join(outside, "precious.txt"), "not the session's");
    const sessions = createSessionFiles({ dir });
    const session = await sessions.create("s-1", new Date("2026-01-01T10:00:00Z"));
    await symlink(outside, session.sessionFile.slice(0, -".jsonl".length));
    expect(await sessions.delete("s-1")).toBe(true);
    expect(await readdir(dir)).toEqual([]);
    expect(await readdir(outside)).toEqual(["precious.txt"]);
  });

  it("refuses hostile ids before touching the disk", async () => {
    const sessions = createSessionFiles({ dir: await tempDirectory("stowage-session-delete-") });
    for (const id of [...HOSTILE_KEYS, "", "a/b", "x.jsonl"]) {
      await expectStowageError(() => sessions.delete(id as string), "INVALID_INPUT");
    }
  });
});
