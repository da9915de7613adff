import { mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expectStowageError, HOSTILE_KEYS } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { createSessionFiles } from "../../src/session/session-files.js";

const base = await tempDirectory("stowage-artifacts-session-files-");
let counter = 0;
const freshDir = () => join(base, `sessions-${++counter}`);
const quiet = { warn: () => {} };

describe("createSessionFiles", () => {
  it("creates an empty <timestamp>_<sessionId>.jsonl, create-only, and opens its artifacts", async () => {
    const dir = freshDir();
    const sessions = createSessionFiles({ dir, logger: quiet });
    const session = await sessions.create("abc", new Date("2026-01-02T03:04:05.678Z"));
    const sessionFile = join(dir, "2026-01-02T03-04-05-678Z_abc.jsonl");
    expect(session).toMatchObject({ sessionId: "abc", startedAt: "2026-01-02T03-04-05-678Z", sessionFile });
    expect(await readFile(sessionFile, "utf8")).toBe("");
    expect(session.artifacts.dir).toBe(join(dir, "2026-01-02T03-04-05-678Z_abc"));

    const id = await session.artifacts.saveArtifact("bash", "hello\n");
    expect((await session.router.read(`artifact://${id}`)).text).toBe("hello\n");
    expect(await readdir(dir)).toEqual(expect.arrayContaining(["2026-01-02T03-04-05-678Z_abc.jsonl"]));
  });

  it("lists sessions newest first and gets one by id, its artifacts included", async () => {
    const dir = freshDir();
    const sessions = createSessionFiles({ dir, logger: quiet });
    expect(await sessions.list()).toEqual([]);
    await sessions.create("old", new Date("2026-01-01T00:00:00.000Z"));
    await sessions.create("new", new Date("2026-03-01T00:00:00.000Z"));
    const middle = await sessions.create("b_mid", new Date("2026-02-01T00:00:00.000Z"));
    await sessions.create("a_mid", new Date("2026-02-01T00:00:00.000Z"));
    await middle.artifacts.saveArtifact("bash", "kept\n");

    expect(await sessions.list()).toEqual([
      {
        sessionId: "new",
        startedAt: "2026-03-01T00-00-00-000Z",
        sessionFile: join(dir, "2026-03-01T00-00-00-000Z_new.jsonl"),
      },
      {
        sessionId: "a_mid",
        startedAt: "2026-02-01T00-00-00-000Z",
        sessionFile: join(dir, "2026-02-01T00-00-00-000Z_a_mid.jsonl"),
      },
      {
        sessionId: "b_mid",
        startedAt: "2026-02-01T00-00-00-000Z",
        sessionFile: join(dir, "2026-02-01T00-00-00-000Z_b_mid.jsonl"),
      },
      {
        sessionId: "old",
        startedAt: "2026-01-01T00-00-00-000Z",
        sessionFile: join(dir, "2026-01-01T00-00-00-000Z_old.jsonl"),
      },
    ]);
    const found = await sessions.get("b_mid");
    expect(found.sessionFile).toBe(middle.sessionFile);
    expect((await found.router.read("artifact://0")).text).toBe("kept\n");
  });

  it("a missing directory has no sessions; get is NOT_FOUND", async () => {
    const sessions = createSessionFiles({ dir: freshDir() });
    expect(await sessions.list()).toEqual([]);
    await expectStowageError(sessions.get("abc"), "NOT_FOUND", "SESSION_NOT_FOUND");
  });

  it("refuses a second session with the same id, also when created at once", async () => {
    const dir = freshDir();
    const sessions = createSessionFiles({ dir });
    await sessions.create("dup", new Date("2026-01-01T00:00:00.000Z"));
    await expectStowageError(sessions.create("dup"), "ALREADY_EXISTS", "SESSION_EXISTS");
    const outcomes = await Promise.allSettled([sessions.create("race"), sessions.create("race")]);
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect((await sessions.list()).map((session) => session.sessionId).sort()).toEqual(["dup", "race"]);
  });

  it("ids that hold _ or look like another session's name never match another session", async () => {
    const dir = freshDir();
    const sessions = createSessionFiles({ dir });
    const at = new Date("2026-01-01T00:00:00.000Z");
    await sessions.create("b", at);
    await sessions.create("a_b", at);
    await sessions.create("2026-01-01T00-00-00-000Z_b", at);
    expect((await sessions.get("b")).sessionFile).toBe(join(dir, "2026-01-01T00-00-00-000Z_b.jsonl"));
    expect((await sessions.get("a_b")).sessionFile).toBe(join(dir, "2026-01-01T00-00-00-000Z_a_b.jsonl"));
    expect((await sessions.list()).map((session) => session.sessionId).sort()).toEqual([
      "2026-01-01T00-00-00-000Z_b",
      "a_b",
      "b",
    ]);
    // `b.jsonl` would own the directory `<timestamp>_b.jsonl`: the session file of `b`.
    await expectStowageError(sessions.create("b.jsonl", at), "INVALID_INPUT", "INVALID_SESSION_ID");
  });

  it("ignores what is not a session file", async () => {
    const dir = freshDir();
    const sessions = createSessionFiles({ dir });
    const kept = await sessions.create("kept", new Date("2026-01-01T00:00:00.000Z"));
    await kept.artifacts.saveArtifact("bash", "x");
    for (const name of [
      "notes.txt",
      "abc.jsonl",
      "2026_bad id.jsonl",
      ".hidden_x.jsonl",
      "2026_x.jsonl.partial",
      "2026_x.jsonl.jsonl",
      "2026_ünï.jsonl",
    ]) {
      await writeFile(join(dir, name), "");
    }
    await mkdir(join(dir, "2026_directory.jsonl"));
    await symlink(kept.sessionFile, join(dir, "2026_link.jsonl"));
    expect((await sessions.list()).map((session) => session.sessionId)).toEqual(["kept"]);
  });

  it.each([...HOSTILE_KEYS, { value: "x.jsonl", why: "ends in .jsonl" }, { value: "_x", why: "leading _" }])(
    "refuses the session id $why, creating nothing",
    async ({ value }) => {
      const dir = freshDir();
      const sessions = createSessionFiles({ dir });
      await expectStowageError(sessions.create(value as string), "INVALID_INPUT", "INVALID_SESSION_ID");
      await expectStowageError(sessions.get(value as string), "INVALID_INPUT", "INVALID_SESSION_ID");
      expect(await readdir(dir).catch(() => "missing")).toBe("missing");
    },
  );

  it.each<[string, unknown]>([
    ["options missing", undefined],
    ["an empty dir", { dir: "" }],
    ["a dir with NUL", { dir: "/tmp/a\u0000b" }],
    ["fsync that is not a boolean", { dir: "/tmp/x", fsync: 1 }],
    ["a logger without warn", { dir: "/tmp/x", logger: {} }],
  ])("refuses %s", async (_, options) => {
    await expectStowageError(() => createSessionFiles(options as never), "INVALID_INPUT");
  });

  it("a file where the directory should be is a CONFLICT", async () => {
    const dir = freshDir();
    await writeFile(dir, "not a directory");
    const sessions = createSessionFiles({ dir });
    await expectStowageError(sessions.list(), "CONFLICT", "NOT_A_DIRECTORY");
    await expectStowageError(sessions.create("abc"), "CONFLICT");
  });
});
