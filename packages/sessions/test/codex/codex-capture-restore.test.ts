import { mkdir, readFile, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { beforeAll, describe, expect, it } from "vitest";
import { captureSession } from "../../src/archive/capture-session.js";
import { restoreSession } from "../../src/archive/restore-session.js";
import { verifySessionBlob } from "../../src/archive/verify-session-blob.js";
import { codexRolloutLocation } from "../../src/codex/rollout-location.js";
import { HOSTILE_IDS } from "../../src/testing/hostile-ids.js";
import { buildArchive } from "../build-archive.js";
import { snapshotDirectory } from "../dir-snapshot.js";

const base = await tempDirectory("stowage-codex-");
const codexHome = join(base, "codex-home");
const dayFolder = "2026/11/23";
const sessionId = "019e1625-789d-76c0-80ab-3724b5ddb799";
const otherId = "019e1695-0522-7c83-8b39-0dd379793f80";
const rolloutName = (id: string, time: string) => `rollout-2026-11-23T${time}-${id}.jsonl`;

/** Rollout lines in the shape Codex 0.12x writes: `{ timestamp, type, payload }`. */
function rollout(id: string, fact: string): string {
  const at = "2026-11-23T04:00:00.000Z";
  return [
    {
      timestamp: at,
      type: "session_meta",
      payload: {
        id,
        timestamp: at,
        cwd: "/work",
        originator: "codex_exec",
        cli_version: "0.169.0",
        source: "exec",
        model_provider: "mock",
      },
    },
    {
      timestamp: at,
      type: "turn_context",
      payload: {
        cwd: "/work",
        approval_policy: "never",
        sandbox_policy: { mode: "read-only" },
        model: "gpt-5",
      },
    },
    {
      timestamp: at,
      type: "response_item",
      payload: { type: "message", role: "user", content: [{ type: "input_text", text: fact }] },
    },
    { timestamp: at, type: "event_msg", payload: { type: "user_message", message: fact, images: [] } },
    {
      timestamp: at,
      type: "response_item",
      payload: { type: "message", role: "assistant", content: [{ type: "output_text", text: "Noted." }] },
    },
    {
      timestamp: at,
      type: "event_msg",
      payload: { type: "token_count", info: { total_token_usage: { input_tokens: 12, output_tokens: 2 } } },
    },
  ]
    .map((line) => JSON.stringify(line))
    .join("\n")
    .concat("\n");
}

beforeAll(async () => {
  const day = join(codexHome, "sessions", dayFolder);
  await mkdir(day, { recursive: true });
  // Two sessions in one day folder; only the captured one may come back.
  await writeFile(
    join(day, rolloutName(sessionId, "04-00-00")),
    rollout(sessionId, "The secret fact is 42."),
  );
  await writeFile(join(day, rolloutName(otherId, "05-00-00")), rollout(otherId, "Another session."));
  await utimes(join(day, rolloutName(sessionId, "04-00-00")), 1_795_406_400, 1_795_406_400.123);
  // An older day folder, searched after the newer one.
  await mkdir(join(codexHome, "sessions", "2026", "10", "01"), { recursive: true });
});

describe("Codex sessions", () => {
  it("finds a rollout by session id, relative to sessions/", async () => {
    const location = await codexRolloutLocation({ codexHome, sessionId });
    expect(location.relativePath).toBe(`${dayFolder}/${rolloutName(sessionId, "04-00-00")}`);
    expect(location.rolloutPath).toBe(join(codexHome, "sessions", location.relativePath));
    await expectStowageError(codexRolloutLocation({ codexHome, sessionId: "0000-nope" }), "NOT_FOUND");
    await expectStowageError(
      codexRolloutLocation({ codexHome: join(base, "absent"), sessionId }),
      "NOT_FOUND",
    );
  });

  it("honours CODEX_HOME when no codexHome is given", async () => {
    const saved = process.env.CODEX_HOME;
    process.env.CODEX_HOME = codexHome;
    try {
      expect((await codexRolloutLocation({ sessionId })).codexHome).toBe(codexHome);
    } finally {
      if (saved === undefined) delete process.env.CODEX_HOME;
      else process.env.CODEX_HOME = saved;
    }
  });

  it("captures the rollout and restores it under the same relative path in a fresh home, alone", async () => {
    const captured = await captureSession({ agent: "codex", codexHome, sessionId });
    expect(captured.agent).toBe("codex");
    expect(captured.manifest.agent).toBe("codex");
    expect(captured.manifest.projectKey).toBeUndefined();
    expect(captured.manifest.files.map((file) => file.path)).toEqual([
      `${dayFolder}/${rolloutName(sessionId, "04-00-00")}`,
    ]);
    expect(await verifySessionBlob(captured, { agent: "codex" })).toMatchObject({ format: "archive" });

    const fresh = join(base, "fresh-home");
    const restored = await restoreSession(captured, { codexHome: fresh });
    expect(restored.agent).toBe("codex");
    expect(restored.transcriptPath).toBe(
      join(fresh, "sessions", dayFolder, rolloutName(sessionId, "04-00-00")),
    );
    expect(await readFile(restored.transcriptPath!, "utf8")).toBe(
      rollout(sessionId, "The secret fact is 42."),
    );
    const tree = await snapshotDirectory(fresh);
    expect(Object.keys(tree)).toEqual([
      "sessions",
      "sessions/2026",
      "sessions/2026/11",
      "sessions/2026/11/23",
      `sessions/2026/11/23/${rolloutName(sessionId, "04-00-00")}`,
    ]);
    // The mtime came back with the bytes.
    expect(tree[`sessions/2026/11/23/${rolloutName(sessionId, "04-00-00")}`]).toMatch(/ 1795406400123$/);
  });

  it("restoring beside other sessions of the day replaces only its own rollout", async () => {
    const captured = await captureSession({ agent: "codex", codexHome, sessionId });
    const target = join(base, "shared-home");
    const day = join(target, "sessions", dayFolder);
    await mkdir(day, { recursive: true });
    await writeFile(join(day, rolloutName(otherId, "05-00-00")), "theirs\n");
    await writeFile(join(day, rolloutName(sessionId, "04-00-00")), "stale\n");
    const restored = await restoreSession(captured, { codexHome: target });
    expect(restored.replaced).toEqual([rolloutName(sessionId, "04-00-00")]);
    expect(await readFile(join(day, rolloutName(otherId, "05-00-00")), "utf8")).toBe("theirs\n");
    await expectStowageError(restoreSession(captured, { codexHome: target, overwrite: false }), "CONFLICT");
  });

  it("takes 29 February of a leap year; captures no rollout that sits outside its own day folder", async () => {
    const leap = `2028/02/29/rollout-2028-02-29T23-59-59-${sessionId}.jsonl`;
    const archive = await buildArchive({
      sessionId,
      files: [{ path: leap, content: new TextEncoder().encode(rollout(sessionId, "leap")) }],
      manifest: { agent: "codex", projectKey: undefined },
    });
    const home = join(base, "leap-home");
    const restored = await restoreSession(archive, { codexHome: home });
    expect(restored.transcriptPath).toBe(join(home, "sessions", ...leap.split("/")));

    const moved = join(base, "moved-home");
    await mkdir(join(moved, "sessions", "2026", "11", "24"), { recursive: true });
    await writeFile(
      join(moved, "sessions", "2026", "11", "24", rolloutName(sessionId, "04-00-00")),
      rollout(sessionId, "x"),
    );
    const error = await expectStowageError(
      captureSession({ agent: "codex", codexHome: moved, sessionId }),
      "INVALID_INPUT",
    );
    expect(error.reason).toBe("UNSAFE_ENTRY_PATH");
  });

  it("refuses an archive of one agent restored as another", async () => {
    const captured = await captureSession({ agent: "codex", codexHome, sessionId });
    const error = await expectStowageError(
      restoreSession(captured, { agent: "claude-code", configDir: join(base, "claude") }),
      "INVALID_INPUT",
    );
    expect(error.reason).toBe("AGENT_MISMATCH");
  });

  it("does not follow a symlinked day folder or rollout", async () => {
    const linked = join(base, "linked-home");
    await mkdir(join(linked, "sessions", "2026", "11"), { recursive: true });
    await symlink(join(codexHome, "sessions", dayFolder), join(linked, "sessions", dayFolder));
    await expectStowageError(codexRolloutLocation({ codexHome: linked, sessionId }), "NOT_FOUND");
    const captured = await captureSession({ agent: "codex", codexHome, sessionId });
    const error = await expectStowageError(restoreSession(captured, { codexHome: linked }), "FORBIDDEN");
    expect(error.reason).toBe("SYMLINK_REFUSED");
    await rm(linked, { recursive: true });
  });

  describe("hostile archives", () => {
    const content = new TextEncoder().encode(rollout(sessionId, "x"));
    const file = (path: string) => ({ path, content });
    const good = `${dayFolder}/${rolloutName(sessionId, "04-00-00")}`;
    const cases: [string, Parameters<typeof buildArchive>[0]][] = [
      [
        "another session's rollout",
        { sessionId, files: [file(`${dayFolder}/${rolloutName(otherId, "04-00-00")}`)] },
      ],
      ["a rollout outside a day folder", { sessionId, files: [file(rolloutName(sessionId, "04-00-00"))] }],
      [
        "traversal in the day folder",
        { sessionId, files: [file(`2026/../../${rolloutName(sessionId, "04-00-00")}`)] },
      ],
      [
        "a day folder that is not digits",
        { sessionId, files: [file(`2026/11/x3/${rolloutName(sessionId, "04-00-00")}`)] },
      ],
      ["an absolute path", { sessionId, files: [file(`/${good}`)] }],
      ...(
        [
          ["month 99, day 99, 99 o'clock", `0000/99/99/rollout-0000-99-99T99-99-99-${sessionId}.jsonl`],
          ["month 13", `2026/13/01/rollout-2026-13-01T04-00-00-${sessionId}.jsonl`],
          ["day 00", `2026/11/00/rollout-2026-11-00T04-00-00-${sessionId}.jsonl`],
          ["31 November", `2026/11/31/rollout-2026-11-31T04-00-00-${sessionId}.jsonl`],
          ["29 February of a common year", `2026/02/29/rollout-2026-02-29T04-00-00-${sessionId}.jsonl`],
          ["hour 24", `2026/11/23/rollout-2026-11-23T24-00-00-${sessionId}.jsonl`],
          ["second 60", `2026/11/23/rollout-2026-11-23T04-00-60-${sessionId}.jsonl`],
          [
            "a name of another day than its folder",
            `2026/11/23/rollout-2026-11-24T04-00-00-${sessionId}.jsonl`,
          ],
        ] as const
      ).map(([what, path]): [string, Parameters<typeof buildArchive>[0]] => [
        `a day folder or time that is no date: ${what}`,
        { sessionId, files: [file(path)] },
      ]),
      [
        "two files",
        { sessionId, files: [file(good), file(`${dayFolder}/${rolloutName(sessionId, "05-00-00")}`)] },
      ],
      [
        "a project key on a Codex archive",
        { sessionId, files: [file(good)], manifest: { projectKey: "-work" } },
      ],
      ["mtimeMs 1e300", { sessionId, files: [file(good)], manifest: {} }],
    ];
    for (const [why, options] of cases) {
      it(why, async () => {
        const archive = await buildArchive({
          ...options,
          manifest: {
            agent: "codex",
            projectKey: undefined,
            ...options.manifest,
            ...(why === "mtimeMs 1e300"
              ? { files: [{ path: good, size: content.byteLength, sha256: "0".repeat(64), mtimeMs: 1e300 }] }
              : {}),
          },
        });
        const target = join(base, `hostile-${why.replace(/\W+/g, "-")}`);
        await expectStowageError(restoreSession(archive, { codexHome: target }), "INVALID_INPUT");
        await expectStowageError(verifySessionBlob(archive), "INVALID_INPUT");
        expect(await snapshotDirectory(target)).toEqual({});
      });
    }

    for (const { value, why } of HOSTILE_IDS) {
      it(`session id: ${why}`, async () => {
        await expectStowageError(
          captureSession({ agent: "codex", codexHome, sessionId: value as string }),
          "INVALID_INPUT",
        );
      });
    }
  });
});
