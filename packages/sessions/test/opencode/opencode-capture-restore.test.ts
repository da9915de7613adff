import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { sha256Hex } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { beforeAll, describe, expect, it } from "vitest";
import { captureSession } from "../../src/archive/capture-session.js";
import { restoreSession } from "../../src/archive/restore-session.js";
import type { SessionArchive } from "../../src/archive/session-archive.js";
import { verifySessionBlob } from "../../src/archive/verify-session-blob.js";
import { HOSTILE_IDS } from "../../src/testing/hostile-ids.js";
import { buildArchive } from "../build-archive.js";
import { fakeOpencodeDatabase, writeFakeOpencode } from "../fake-opencode.js";

const run = promisify(execFile);
const base = await tempDirectory("stowage-opencode-");

const sessionId = "ses_df96f1435ffed9ABkI498J7iJN";
const otherId = "ses_1a2b3c4d5e6fA7B8C9D0E1F2G3";
const userMessage = "msg_20690ece6001hsKGiLP42dA0PJ";
const assistantMessage = "msg_20690ed02001ZkQ0Ixz2hHkD5M";
const userPart = "prt_20690ed01001C0SdMq0wDxog0U";
const assistantPart = "prt_20690ed03001aBcDeFgHiJkLmN";

interface ExportOptions {
  fact?: string;
  /** Ids of the two messages and their parts; default the ones above. */
  ids?: [user: string, userPart: string, assistant: string, assistantPart: string];
}

/** `opencode export <id>` output in OpenCode 1.18's shape: the session's info and its messages with parts. */
function exportOf(id: string, options: ExportOptions = {}) {
  const [user, userPartId, assistant, assistantPartId] = options.ids ?? [
    userMessage,
    userPart,
    assistantMessage,
    assistantPart,
  ];
  return {
    info: {
      id,
      slug: "lucky-falcon",
      projectID: "global",
      directory: "/work",
      title: "A fact",
      version: "1.18.33",
      time: { created: 1795406490570, updated: 1795406496239 },
    },
    messages: [
      {
        info: { role: "user", time: { created: 1795406490854 }, agent: "build", id: user, sessionID: id },
        parts: [
          {
            type: "text",
            text: options.fact ?? "The secret fact is 42.",
            id: userPartId,
            sessionID: id,
            messageID: user,
          },
        ],
      },
      {
        info: {
          role: "assistant",
          parentID: user,
          modelID: "mock-model",
          providerID: "mock",
          id: assistant,
          sessionID: id,
        },
        parts: [{ type: "text", text: "Noted.", id: assistantPartId, sessionID: id, messageID: assistant }],
      },
    ],
  };
}

const json = (value: unknown) => JSON.stringify(value, null, 2);
const bytes = (value: unknown) => new TextEncoder().encode(json(value));

/** An archive of `exported` as the session `id`, built byte by byte (not by capture). */
function archiveOf(id: string, exported: unknown): Promise<SessionArchive> {
  return buildArchive({
    sessionId: id,
    files: [{ path: `${id}.json`, content: bytes(exported) }],
    manifest: { agent: "opencode", projectKey: undefined },
  });
}

let bin: string;
const opencodeIn = (home: string) => ({ bin, env: { HOME: home } });

/** A new OpenCode home holding `exports`, put there by the CLI's own `import`. */
async function homeWith(name: string, ...exports: unknown[]): Promise<string> {
  const home = await mkdtemp(join(base, `${name}-`));
  for (const [index, exported] of exports.entries()) {
    const file = join(home, `seed-${index}.json`);
    await writeFile(file, json(exported));
    await run(bin, ["import", file], { env: { ...process.env, HOME: home } });
  }
  return home;
}

const databaseOf = async (home: string) => readFile(fakeOpencodeDatabase(home), "utf8").catch(() => "(none)");
/** The bytes `opencode export` prints in `home`, read through a file (a pipe would be cut at 64 KiB). */
async function printedIn(home: string, id: string): Promise<string> {
  const file = join(home, `export-${id}.json`);
  await run("sh", ["-c", '"$0" export "$1" > "$2"', bin, id, file], { env: { ...process.env, HOME: home } });
  return readFile(file, "utf8");
}
const exportIn = async (home: string, id: string) => JSON.parse(await printedIn(home, id));
const callsIn = async (home: string) =>
  (await readFile(join(home, "calls.log"), "utf8"))
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as string[]);

let sourceHome: string;
beforeAll(async () => {
  bin = await writeFakeOpencode(join(base, "bin"));
  // Two sessions in one database: only the captured one may come back.
  sourceHome = await homeWith(
    "source",
    exportOf(sessionId),
    exportOf(otherId, { fact: "Another session.", ids: ["msg_o1", "prt_o1", "msg_o2", "prt_o2"] }),
  );
  // A session whose export names another session: what a broken CLI could print.
  const database = JSON.parse(await databaseOf(sourceHome));
  database.sessions.ses_liar = { ...database.sessions[otherId] };
  await writeFile(fakeOpencodeDatabase(sourceHome), JSON.stringify(database));
});

describe("OpenCode sessions", () => {
  it("captures what `opencode export` prints, and restores it with `opencode import` into a fresh home, alone", async () => {
    const captured = await captureSession({ agent: "opencode", sessionId, opencode: opencodeIn(sourceHome) });
    expect(captured.agent).toBe("opencode");
    const printed = await printedIn(sourceHome, sessionId);
    expect(captured.manifest.files).toEqual([
      expect.objectContaining({ path: `${sessionId}.json`, sha256: sha256Hex(printed) }),
    ]);
    expect(await verifySessionBlob(captured, { agent: "opencode" })).toMatchObject({ format: "archive" });
    const fresh = await mkdtemp(join(base, "fresh-"));
    const restored = await restoreSession(captured, { opencode: opencodeIn(fresh) });
    expect(restored).toMatchObject({ agent: "opencode", sessionId, replaced: [] });
    expect(Object.keys(JSON.parse(await databaseOf(fresh)).sessions)).toEqual([sessionId]);
    const back = await exportIn(fresh, sessionId);
    expect(back.messages.map((message: { parts: { text: string }[] }) => message.parts[0]!.text)).toEqual([
      "The secret fact is 42.",
      "Noted.",
    ]);
    // A home with no OpenCode data: nothing to ask the database about; imported a temp file of
    // ours, which is gone.
    const calls = await callsIn(fresh);
    expect(calls.flatMap((call) => call.slice(0, 1))).toEqual(["import", "export"]);
    await expect(readFile(calls[0]![1]!)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("asks the database about the ids unless OpenCode has no data at all (no data directory, or one of empty directories, and no OPENCODE_DB)", async () => {
    const captured = await captureSession({ agent: "opencode", sessionId, opencode: opencodeIn(sourceHome) });
    /** The first command the restore ran the CLI with, into a new home that `prepare` set up. */
    const firstCall = async (prepare: (home: string) => Promise<unknown>, env: NodeJS.ProcessEnv = {}) => {
      const home = await mkdtemp(join(base, "asked-"));
      await prepare(home);
      await restoreSession(captured, { opencode: { bin, env: { HOME: home, ...env } } });
      return (await callsIn(home))[0]![0];
    };
    const dataDir = (home: string) => join(home, ".local", "share", "opencode");
    expect(await firstCall(() => Promise.resolve())).toBe("import");
    expect(await firstCall((home) => mkdir(dataDir(home), { recursive: true }))).toBe("import");
    // What `opencode --version` leaves in a new home (seen with 1.18): empty directories.
    expect(
      await firstCall(async (home) => {
        await mkdir(join(dataDir(home), "log"), { recursive: true });
        await mkdir(join(dataDir(home), "repos"), { recursive: true });
      }),
    ).toBe("import");
    // The JSON files of an OpenCode before 1.2, which its next run moves into a database.
    expect(
      await firstCall(async (home) => {
        await mkdir(join(dataDir(home), "storage", "session"), { recursive: true });
        await writeFile(join(dataDir(home), "storage", "session", "ses_old.json"), "{}");
      }),
    ).toBe("db");
    // A link planted where a directory would be (to an empty one): not taken for one, so asked about.
    expect(
      await firstCall(async (home) => {
        const elsewhere = await mkdtemp(join(base, "linked-"));
        await mkdir(dataDir(home), { recursive: true });
        await symlink(elsewhere, join(dataDir(home), "log"));
      }),
    ).toBe("db");
    // A log file: not a row, but not an empty directory either, so asked about.
    expect(
      await firstCall(async (home) => {
        await mkdir(join(dataDir(home), "log"), { recursive: true });
        await writeFile(join(dataDir(home), "log", "dev.log"), "started\n");
      }),
    ).toBe("db");
    expect(
      await firstCall(async (home) => {
        await mkdir(dataDir(home), { recursive: true });
        await writeFile(join(dataDir(home), "opencode.db"), "");
      }),
    ).toBe("db");
    // A database named elsewhere.
    expect(await firstCall(() => Promise.resolve(), { OPENCODE_DB: "/elsewhere/opencode.db" })).toBe("db");
    // XDG_DATA_HOME moves the data directory: data there is asked about.
    const xdg = await mkdtemp(join(base, "xdg-"));
    await mkdir(join(xdg, "opencode"), { recursive: true });
    await writeFile(join(xdg, "opencode", "opencode.db"), "");
    expect(await firstCall(() => Promise.resolve(), { XDG_DATA_HOME: xdg })).toBe("db");
  });

  it("captures an export larger than a pipe holds whole: the CLI writes into a file, not a pipe", async () => {
    const fact = `The secret fact is ${"long ".repeat(60_000)}42.`;
    const home = await homeWith("large", exportOf(sessionId, { fact }));
    const captured = await captureSession({ agent: "opencode", sessionId, opencode: opencodeIn(home) });
    expect(captured.manifest.files[0]!.size).toBeGreaterThan(300_000);
    const fresh = await mkdtemp(join(base, "large-fresh-"));
    await restoreSession(captured, { opencode: opencodeIn(fresh) });
    expect((await exportIn(fresh, sessionId)).messages[0].parts[0].text).toBe(fact);
  });

  it("needs the CLI: none given is INVALID_INPUT, one that cannot run is UNAVAILABLE", async () => {
    const missing = await expectStowageError(
      captureSession({ agent: "opencode", sessionId } as never),
      "INVALID_INPUT",
    );
    expect(missing.reason).toBe("OPENCODE_CLI_MISSING");
    await expectStowageError(
      captureSession({ agent: "opencode", sessionId, opencode: { bin: join(base, "no-such-opencode") } }),
      "UNAVAILABLE",
    );
  });

  it("an unknown session is NOT_FOUND; an export of another session is refused", async () => {
    const opencode = opencodeIn(sourceHome);
    await expectStowageError(
      captureSession({ agent: "opencode", sessionId: "ses_nope", opencode }),
      "NOT_FOUND",
    );
    const error = await expectStowageError(
      captureSession({ agent: "opencode", sessionId: "ses_liar", opencode }),
      "INVALID_INPUT",
    );
    expect(error.reason).toBe("BAD_OPENCODE_EXPORT");
  });

  describe("overwrite", () => {
    const newer = exportOf(sessionId, {
      fact: "The secret fact is 43.",
      ids: [userMessage, userPart, "msg_20690ed99001NewAssistantXX", "prt_20690ed99001NewPartXXXXXX"],
    });

    it("with overwrite (the default), an existing session is replaced by the restored one, row for row", async () => {
      const home = await homeWith(
        "overwrite",
        exportOf(sessionId),
        exportOf(otherId, { ids: ["m1", "p1", "m2", "p2"] }),
      );
      const other = await exportIn(home, otherId);
      const restored = await restoreSession(await archiveOf(sessionId, newer), {
        opencode: opencodeIn(home),
      });
      expect(restored.replaced).toEqual([`${sessionId}.json`]);
      const back = await exportIn(home, sessionId);
      // What import alone would have kept (the old text, the old assistant message) is gone.
      expect(back.messages.map((message: { info: { id: string } }) => message.info.id)).toEqual([
        userMessage,
        "msg_20690ed99001NewAssistantXX",
      ]);
      expect(back.messages[0].parts[0].text).toBe("The secret fact is 43.");
      expect(await exportIn(home, otherId)).toEqual(other);
    });

    it("with overwrite: false, an existing session is CONFLICT and nothing changes", async () => {
      const home = await homeWith("no-overwrite", exportOf(sessionId));
      const before = await databaseOf(home);
      const error = await expectStowageError(
        restoreSession(await archiveOf(sessionId, newer), { opencode: opencodeIn(home), overwrite: false }),
        "CONFLICT",
      );
      expect(error.details).toEqual({ existing: [`${sessionId}.json`] });
      expect(await databaseOf(home)).toBe(before);
    });

    it("an import that fails after the old copy was deleted puts the old copy back", async () => {
      const home = await homeWith("rollback", exportOf(sessionId));
      const before = await exportIn(home, sessionId);
      await writeFile(join(home, "fail-next-import"), "");
      await expectStowageError(
        restoreSession(await archiveOf(sessionId, newer), { opencode: opencodeIn(home) }),
        "UNAVAILABLE",
      );
      expect(await exportIn(home, sessionId)).toEqual(before);
    });

    /**
     * Restores `newer` and another copy of the session into `home` at the same moment, expects the
     * session to be wholly one of them, and returns what each restore replaced.
     */
    async function restoreTwoAtOnce(home: string): Promise<string[][]> {
      const other = exportOf(sessionId, {
        fact: "The secret fact is 44.",
        ids: [userMessage, userPart, "msg_20690ed99001OtherAssistant", "prt_20690ed99001OtherPartXXXXX"],
      });
      const [first, second] = await Promise.all([
        restoreSession(await archiveOf(sessionId, newer), { opencode: opencodeIn(home) }),
        restoreSession(await archiveOf(sessionId, other), { opencode: opencodeIn(home) }),
      ]);
      const back = await exportIn(home, sessionId);
      const shape = (exported: ReturnType<typeof exportOf>) => ({
        ids: exported.messages.map((message) => message.info.id),
        fact: exported.messages[0]!.parts[0]!.text,
      });
      expect([shape(newer), shape(other)]).toContainEqual(shape(back));
      return [first.replaced, second.replaced];
    }

    it("two restores of one session at once take turns: both succeed, the session is wholly one of them", async () => {
      const replaced = await restoreTwoAtOnce(await homeWith("concurrent", exportOf(sessionId)));
      expect(replaced).toEqual([[`${sessionId}.json`], [`${sessionId}.json`]]);
    });

    it("two restores of one session at once into a new home (no OpenCode data yet): the second still finds the first's and replaces it whole", async () => {
      const replaced = await restoreTwoAtOnce(await mkdtemp(join(base, "concurrent-new-")));
      // One found no data and imported; the other, after it, found the session and replaced it.
      expect(replaced.sort()).toEqual([[], [`${sessionId}.json`]]);
    });

    it("a CLI that exits 0 without importing is UNAVAILABLE, not success", async () => {
      const home = await mkdtemp(join(base, "silent-"));
      const silent = join(base, "silent-opencode");
      await writeFile(
        silent,
        `#!/bin/sh\n[ "$1" = db ] && echo '[]'\n[ "$1" = import ] && echo "File not found: $2"\nexit 0\n`,
        {
          mode: 0o755,
        },
      );
      const error = await expectStowageError(
        restoreSession(await archiveOf(sessionId, exportOf(sessionId)), {
          opencode: { bin: silent, env: { HOME: home } },
        }),
        "UNAVAILABLE",
      );
      expect(error.reason).toBe("OPENCODE_CLI_FAILED");
    });
  });

  describe("never changes another session: ids that belong to one are refused before `opencode import`", () => {
    // Each export is sound on its own (every message and part names the restored session); the
    // database is what makes it hostile.
    const cases: [string, ExportOptions][] = [
      ["a message id of another session", { ids: ["msg_o1", "prt_new1", "msg_new2", "prt_new2"] }],
      ["a part id of another session", { ids: ["msg_new1", "prt_new1", "msg_new2", "prt_o2"] }],
    ];
    for (const [why, options] of cases) {
      it(why, async () => {
        const home = await homeWith(
          "foreign",
          exportOf(otherId, { fact: "Another session.", ids: ["msg_o1", "prt_o1", "msg_o2", "prt_o2"] }),
        );
        const before = await databaseOf(home);
        const calls = (await callsIn(home)).length;
        const archive = await archiveOf(sessionId, exportOf(sessionId, options));
        // The blob is sound: a repository stores it.
        await expect(verifySessionBlob(archive)).resolves.toMatchObject({ format: "archive" });
        const error = await expectStowageError(
          restoreSession(archive, { opencode: opencodeIn(home) }),
          "INVALID_INPUT",
        );
        expect(error.reason).toBe("FOREIGN_ENTRY");
        expect(await databaseOf(home)).toBe(before);
        // Only the database was asked; nothing was imported.
        expect((await callsIn(home)).slice(calls).map((call) => call[0])).toEqual(["db"]);
      });
    }
  });

  describe("hostile archives: refused before the CLI runs", () => {
    const content = (text: string) => new TextEncoder().encode(text);
    const mutated = (change: (exported: ReturnType<typeof exportOf>) => void) => {
      const exported = exportOf(sessionId);
      change(exported);
      return content(json(exported));
    };
    const asWritten = (text: string) => content(text);
    const cases: [string, Parameters<typeof buildArchive>[0]][] = [
      [
        "another file name",
        { sessionId, files: [{ path: `${otherId}.json`, content: bytes(exportOf(otherId)) }] },
      ],
      [
        "a path with a folder",
        { sessionId, files: [{ path: `db/${sessionId}.json`, content: bytes(exportOf(sessionId)) }] },
      ],
      [
        "an export of another session",
        { sessionId, files: [{ path: `${sessionId}.json`, content: bytes(exportOf(otherId)) }] },
      ],
      [
        "an export that is not JSON",
        { sessionId, files: [{ path: `${sessionId}.json`, content: asWritten("{oops") }] },
      ],
      ...(
        [
          ["messages that are not an array", (e) => Object.assign(e, { messages: {} })],
          ["a message of another session", (e) => (e.messages[0]!.info.sessionID = otherId)],
          [
            "a message that names no session",
            (e) => delete (e.messages[0]!.info as { sessionID?: string }).sessionID,
          ],
          ["a part of another session", (e) => (e.messages[1]!.parts[0]!.sessionID = otherId)],
          ["a part filed under another message", (e) => (e.messages[1]!.parts[0]!.messageID = userMessage)],
          [
            "a part filed under another session's message",
            (e) => (e.messages[1]!.parts[0]!.messageID = "msg_o1"),
          ],
          [
            "a part that names no session",
            (e) => delete (e.messages[1]!.parts[0] as { sessionID?: string }).sessionID,
          ],
          ["a part that is not an object", (e) => ((e.messages[1]!.parts as unknown[])[0] = "text")],
          ["a part without an id", (e) => delete (e.messages[1]!.parts[0] as { id?: string }).id],
          ["two messages with one id", (e) => (e.messages[1]!.info.id = userMessage)],
          ["two parts with one id", (e) => (e.messages[1]!.parts[0]!.id = userPart)],
          [
            "a message id with SQL in it",
            (e) => {
              e.messages[0]!.info.id = "msg_1') OR 1=1; DELETE FROM part; --";
              e.messages[0]!.parts[0]!.messageID = e.messages[0]!.info.id;
            },
          ],
          ["a part id with a quote", (e) => (e.messages[0]!.parts[0]!.id = "prt_'x")],
          ["an oversized message id", (e) => (e.messages[0]!.info.id = "m".repeat(129))],
        ] as [string, (exported: ReturnType<typeof exportOf>) => void][]
      ).map(([why, change]): [string, Parameters<typeof buildArchive>[0]] => [
        why,
        { sessionId, files: [{ path: `${sessionId}.json`, content: mutated(change) }] },
      ]),
      [
        "two files",
        {
          sessionId,
          files: [
            { path: `${sessionId}.json`, content: bytes(exportOf(sessionId)) },
            { path: `${sessionId}.json`, content: asWritten("{}") },
          ],
        },
      ],
    ];
    for (const [why, options] of cases) {
      it(why, async () => {
        const archive = await buildArchive({
          ...options,
          manifest: { agent: "opencode", projectKey: undefined },
        });
        const home = await homeWith(
          "hostile",
          exportOf(otherId, { fact: "Another session.", ids: ["msg_o1", "prt_o1", "msg_o2", "prt_o2"] }),
        );
        const before = await databaseOf(home);
        const calls = (await callsIn(home)).length;
        await expectStowageError(restoreSession(archive, { opencode: opencodeIn(home) }), "INVALID_INPUT");
        await expectStowageError(verifySessionBlob(archive), "INVALID_INPUT");
        expect(await databaseOf(home)).toBe(before);
        expect(await callsIn(home)).toHaveLength(calls);
      });
    }
    for (const { value, why } of HOSTILE_IDS) {
      it(`session id: ${why}`, async () => {
        await expectStowageError(
          captureSession({ agent: "opencode", sessionId: value as string, opencode: opencodeIn(sourceHome) }),
          "INVALID_INPUT",
        );
      });
    }
  });
});
