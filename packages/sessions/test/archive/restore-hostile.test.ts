import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { StowageErrorCode } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { beforeEach, describe, expect, it } from "vitest";
import { MAX_ARCHIVE_ENTRIES, MAX_MANIFEST_BYTES } from "../../src/archive/manifest.js";
import { restoreSession } from "../../src/archive/restore-session.js";
import type { SessionArchive } from "../../src/archive/session-archive.js";
import { verifySessionBlob } from "../../src/archive/verify-session-blob.js";
import { compressChunks } from "../../src/codec/compress.js";
import { buildArchive, type RawFile } from "../build-archive.js";
import { snapshotDirectory } from "../dir-snapshot.js";

const base = await tempDirectory("stowage-restore-hostile-");

const sessionId = "2a3b4c5d-6e7f-4809-9a1b-2c3d4e5f6a7b";
const otherId = "ffffffff-ffff-4fff-8fff-ffffffffffff";
const projectKey = "-workspace-app";
const text = (value: string) => new TextEncoder().encode(value);
const main: RawFile = { path: `${sessionId}.jsonl`, content: text('{"type":"user"}\n') };

let configDir: string;
let projectDir: string;
let outside: string;

beforeEach(async () => {
  configDir = await mkdtemp(join(base, "config-"));
  projectDir = join(configDir, "projects", projectKey);
  outside = await mkdtemp(join(base, "outside-"));
  // A project directory with another session and a stale copy of this one: restore must leave
  // all of it exactly as it was whenever it fails.
  await mkdir(join(projectDir, sessionId, "subagents"), { recursive: true });
  await writeFile(join(projectDir, `${sessionId}.jsonl`), "stale transcript\n");
  await writeFile(join(projectDir, sessionId, "subagents", "agent-old.jsonl"), "old\n");
  await writeFile(join(projectDir, "ffffffff-ffff-4fff-8fff-ffffffffffff.jsonl"), "other session\n");
  await writeFile(join(outside, "secret.txt"), "do not touch\n");
});

interface HostileCase {
  why: string;
  code: StowageErrorCode;
  reason?: string;
  archive: () => Promise<SessionArchive>;
  maxBytes?: number;
  /** The limit the error must carry in `details.limit` (limits are not exported; the README gives them). */
  limit?: number;
  /**
   * Puts something in the project directory first. The blob itself is then sound (a repository
   * stores it); what is refused is writing it over what is there.
   */
  plant?: () => Promise<void>;
}

const file = (path: string, content = "x"): RawFile => ({ path, content: text(content) });

const cases: HostileCase[] = [
  ...[
    ["../escape.jsonl", "parent traversal"],
    [`${sessionId}/../../escape`, "traversal inside the companion path"],
    [`${sessionId}/..`, "trailing traversal"],
    [`${sessionId}/./x`, "dot segment"],
    ["/etc/cron.d/evil", "absolute path"],
    ["//server/share", "UNC-like path"],
    [`${sessionId}\\..\\..\\evil`, "backslash traversal"],
    ["C:\\Windows\\evil", "Windows drive path"],
    [`${sessionId}/a\u0000b`, "NUL byte"],
    [`${sessionId}/a\nb`, "newline"],
    [`${sessionId}//x`, "empty segment"],
    [`${sessionId}/`, "trailing slash"],
    ["%2e%2e/escape", "URL-encoded traversal outside the session"],
    ["ffffffff-ffff-4fff-8fff-ffffffffffff.jsonl", "another session's transcript"],
    ["ffffffff-ffff-4fff-8fff-ffffffffffff/subagents/agent-x.jsonl", "another session's companion"],
    [".stowage-tmp-restore-x/new/a", "the staging directory"],
    ["agent-../x.jsonl", "legacy name with traversal"],
    [`${sessionId}/bad\ud800`, "lone surrogate"],
    [`${sessionId}/${"s".repeat(256)}`, "segment too long"],
    // The session's files in the config directory: only its own, only where Claude Code keeps them.
    ["~config/settings.json", "a config-directory file that is no session's"],
    [`~config/file-history/${otherId}/abc@v1`, "another session's rewind checkpoint"],
    [`~config/tasks/${otherId}/1.json`, "another session's task"],
    [`~config/tasks/${sessionId}/.lock`, "the task list's lock (machine-local)"],
    [`~config/tasks/${sessionId}/1.sh`, "a task that is not JSON"],
    [`~config/session-env/${otherId}/hook-0.sh`, "another session's environment"],
    [`~config/session-env/${sessionId}/a/b`, "a nested session-env path"],
    [`~config/file-history/${sessionId}/../../settings.json`, "traversal out of file-history"],
    [`~config/todos/${otherId}-agent-${otherId}.json`, "another session's todos"],
    [`~config/todos/${sessionId}.json`, "a todo file without its agent"],
    ["~config/plans/../settings.md", "traversal out of plans"],
    ["~config/plans/Evil.md", "a plan name that is no slug"],
    ["~config/plans/a.sh", "a plan that is not markdown"],
    ["~config/plans/sub/a.md", "a nested plan path"],
    [
      `~config/projects/${projectKey}/${otherId}.jsonl`,
      "another session's transcript through the config prefix",
    ],
    ["~config/", "the config prefix alone"],
    ["~config", "the config prefix without a slash"],
    // Configuration and memory captured on request: only where Claude Code reads them.
    ["~user/../.claude.json", "traversal out of the user's configuration to the install's state"],
    ["~user/.credentials.json", "credentials as user configuration"],
    ["~project/../outside.md", "traversal out of the project"],
    ["~project-dir/memory/../../x.jsonl", "traversal out of the project's memory"],
    [`~project-dir/${otherId}.jsonl`, "another session's transcript through the memory prefix"],
    ["~project-dir/memory", "the memory directory as a file"],
    ["~claude.json/../.claude.json", "traversal through the MCP servers' entry"],
    ["~claude.json/other.json", "another file under the MCP servers' prefix"],
    ["~claude.json", "the MCP servers' prefix without its file"],
  ].map(([path, why]) => ({
    why: `entry path: ${why}`,
    code: "INVALID_INPUT" as const,
    archive: () => buildArchive({ sessionId, files: [main, file(path!)] }),
  })),
  {
    why: "no main transcript",
    code: "INVALID_INPUT",
    archive: () => buildArchive({ sessionId, files: [file(`${sessionId}/tool-results/a.txt`)] }),
  },
  {
    why: "the same path twice",
    code: "INVALID_INPUT",
    archive: () => buildArchive({ sessionId, files: [main, file(`${sessionId}/a`), file(`${sessionId}/a`)] }),
  },
  {
    why: "a path that is both a file and a directory",
    code: "INVALID_INPUT",
    archive: () =>
      buildArchive({ sessionId, files: [main, file(`${sessionId}/a`), file(`${sessionId}/a/b`)] }),
  },
  {
    why: "a manifest for another session than the label",
    code: "INVALID_INPUT",
    archive: async () => ({
      ...(await buildArchive({ sessionId, files: [main] })),
      sessionId: "ffffffff-ffff-4fff-8fff-ffffffffffff",
    }),
  },
  {
    why: "a manifest session id that is not a UUID",
    code: "INVALID_INPUT",
    archive: () => buildArchive({ sessionId, files: [main], manifest: { sessionId: "../x" } }),
  },
  {
    why: "a hostile project key in the manifest",
    code: "INVALID_INPUT",
    archive: () => buildArchive({ sessionId, files: [main], manifest: { projectKey: "../../etc" } }),
  },
  {
    why: "too many entries",
    code: "INVALID_INPUT",
    limit: 10_000,
    archive: () =>
      buildArchive({
        sessionId,
        files: [main, ...Array.from({ length: MAX_ARCHIVE_ENTRIES }, (_, i) => file(`${sessionId}/f${i}`))],
      }),
  },
  {
    why: "a modification time of 1e300 ms (INVALID_INPUT, not a file-system failure)",
    code: "INVALID_INPUT",
    limit: Date.UTC(9999, 11, 31, 23, 59, 59, 999),
    archive: () =>
      buildArchive({
        sessionId,
        files: [main],
        manifest: {
          files: [{ path: main.path, size: main.content.byteLength, sha256: "0".repeat(64), mtimeMs: 1e300 }],
        },
      }),
  },
  {
    why: "a negative modification time",
    code: "INVALID_INPUT",
    archive: () =>
      buildArchive({
        sessionId,
        files: [main],
        manifest: {
          files: [{ path: main.path, size: main.content.byteLength, sha256: "0".repeat(64), mtimeMs: -1 }],
        },
      }),
  },
  {
    why: "a size past the largest safe integer",
    code: "INVALID_INPUT",
    archive: () => buildArchive({ sessionId, files: [{ ...main, size: 2 ** 60 }] }),
  },
  {
    why: "an unknown agent in the manifest",
    code: "INVALID_INPUT",
    archive: () => buildArchive({ sessionId, files: [main], manifest: { agent: "aider" } }),
  },
  {
    why: "a Claude Code manifest without a project key",
    code: "INVALID_INPUT",
    archive: () => buildArchive({ sessionId, files: [main], manifest: { projectKey: undefined } }),
  },
  {
    why: "a legacy agent-<id>.jsonl whose lines name another session (it would replace that session's file)",
    code: "INVALID_INPUT",
    archive: () =>
      buildArchive({
        sessionId,
        files: [
          main,
          file("agent-other.jsonl", '{"sessionId":"ffffffff-ffff-4fff-8fff-ffffffffffff","type":"user"}\n'),
        ],
      }),
  },
  {
    why: "a legacy agent-<id>.jsonl that names no session",
    code: "INVALID_INPUT",
    archive: () => buildArchive({ sessionId, files: [main, file("agent-anon.jsonl", '{"type":"user"}\n')] }),
  },
  ...(
    [
      [
        "another session's legacy agent-deadbeef.jsonl on disk, under the archive's own copy naming this session",
        () =>
          writeFile(
            join(projectDir, "agent-deadbeef.jsonl"),
            `${JSON.stringify({ sessionId: otherId, text: "O's subagent" })}\n`,
          ),
      ],
      [
        "a legacy agent-deadbeef.jsonl on disk that names no session",
        () => writeFile(join(projectDir, "agent-deadbeef.jsonl"), '{"type":"user"}\n'),
      ],
      [
        "a link named agent-deadbeef.jsonl on disk, to a file naming this session (never followed)",
        async () => {
          await writeFile(join(outside, "mine.jsonl"), `${JSON.stringify({ sessionId })}\n`);
          await symlink(join(outside, "mine.jsonl"), join(projectDir, "agent-deadbeef.jsonl"));
        },
      ],
      [
        "a FIFO named agent-deadbeef.jsonl on disk (refused without blocking)",
        async () => {
          execFileSync("mkfifo", [join(projectDir, "agent-deadbeef.jsonl")]);
        },
      ],
    ] as const
  ).map(
    ([why, plant]): HostileCase => ({
      why,
      code: "INVALID_INPUT",
      reason: "FOREIGN_ENTRY",
      plant,
      archive: () =>
        buildArchive({
          sessionId,
          files: [main, file("agent-deadbeef.jsonl", `${JSON.stringify({ sessionId, text: "ATTACKER" })}\n`)],
        }),
    }),
  ),
  {
    why: "another session's plan on disk, under a name this session's transcript does not give",
    code: "INVALID_INPUT",
    reason: "FOREIGN_ENTRY",
    plant: async () => {
      await mkdir(join(configDir, "plans"));
      await writeFile(join(configDir, "plans", "quiet-blue-fox.md"), "someone else's plan\n");
    },
    archive: () =>
      buildArchive({ sessionId, files: [main, file("~config/plans/quiet-blue-fox.md", "ATTACKER")] }),
  },
  {
    why: "a link planted at the plans directory (never written through)",
    code: "FORBIDDEN",
    reason: "SYMLINK_REFUSED",
    plant: () => symlink(outside, join(configDir, "plans")),
    archive: () => buildArchive({ sessionId, files: [main, file("~config/plans/secret.md", "overwritten")] }),
  },
  {
    why: "a link planted at the session's file-history directory (never written through)",
    code: "FORBIDDEN",
    reason: "SYMLINK_REFUSED",
    plant: async () => {
      await mkdir(join(configDir, "file-history"));
      await symlink(outside, join(configDir, "file-history", sessionId));
    },
    archive: () =>
      buildArchive({
        sessionId,
        files: [main, file(`~config/file-history/${sessionId}/secret.txt`, "overwritten")],
      }),
  },
  {
    why: "a directory on disk where the archive has a file (a restore never deletes a directory)",
    code: "CONFLICT",
    reason: "NOT_A_FILE",
    plant: async () => {
      await mkdir(join(projectDir, sessionId, "tool-results", "a.txt"), { recursive: true });
      await writeFile(join(projectDir, sessionId, "tool-results", "a.txt", "inside"), "kept\n");
    },
    archive: () => buildArchive({ sessionId, files: [main, file(`${sessionId}/tool-results/a.txt`)] }),
  },
  {
    why: "a link planted where the companion directory goes (never written through, never removed)",
    code: "FORBIDDEN",
    reason: "SYMLINK_REFUSED",
    plant: async () => {
      await rm(join(projectDir, sessionId), { recursive: true });
      await symlink(outside, join(projectDir, sessionId));
    },
    archive: () => buildArchive({ sessionId, files: [main, file(`${sessionId}/secret.txt`, "overwritten")] }),
  },
  {
    why: "a file planted where the companion directory goes",
    code: "CONFLICT",
    reason: "NOT_A_DIRECTORY",
    plant: async () => {
      await rm(join(projectDir, sessionId), { recursive: true });
      await writeFile(join(projectDir, sessionId), "a file\n");
    },
    archive: () => buildArchive({ sessionId, files: [main, file(`${sessionId}/a.txt`)] }),
  },
  {
    why: "a brotli blob that is not an archive (the JSONL compatibility format is gzip only)",
    code: "INVALID_INPUT",
    archive: async () => {
      const bytes = text('{"type":"user"}\n');
      return {
        sessionId,
        codec: "brotli",
        blob: await compressChunks("brotli", [bytes]),
        rawSizeBytes: bytes.byteLength,
      };
    },
  },
  {
    why: "a gzipped JSONL transcript with a line that is not JSON",
    code: "INVALID_INPUT",
    archive: async () => {
      const bytes = text('{"type":"user"}\nnot json\n');
      return {
        sessionId,
        codec: "gzip",
        blob: await compressChunks("gzip", [bytes]),
        rawSizeBytes: bytes.byteLength,
      };
    },
  },
  {
    why: "a gzipped JSONL transcript of another session",
    code: "INVALID_INPUT",
    archive: async () => {
      const bytes = text('{"type":"user","sessionId":"ffffffff-ffff-4fff-8fff-ffffffffffff"}\n');
      return {
        sessionId,
        codec: "gzip",
        blob: await compressChunks("gzip", [bytes]),
        rawSizeBytes: bytes.byteLength,
      };
    },
  },
  {
    why: "a gzipped JSONL transcript whose recorded size is wrong",
    code: "INTEGRITY",
    archive: async () => {
      const bytes = text('{"type":"user"}\n');
      return {
        sessionId,
        codec: "gzip",
        blob: await compressChunks("gzip", [bytes]),
        rawSizeBytes: bytes.byteLength + 1,
      };
    },
  },
  {
    why: "junk bytes labelled gzip with sessionRawSizeBytes 999999999",
    code: "TOO_LARGE",
    archive: async () => ({
      sessionId,
      codec: "gzip",
      blob: new Uint8Array(randomBytes(512)),
      rawSizeBytes: 999_999_999,
    }),
  },
  {
    why: "junk bytes labelled gzip with a plausible size",
    code: "INTEGRITY",
    archive: async () => ({
      sessionId,
      codec: "gzip",
      blob: new Uint8Array(randomBytes(512)),
      rawSizeBytes: 4096,
    }),
  },
  {
    why: "a negative size",
    code: "INVALID_INPUT",
    archive: () => buildArchive({ sessionId, files: [{ ...main, size: -1 }] }),
  },
  {
    why: "a malformed sha256",
    code: "INVALID_INPUT",
    archive: () => buildArchive({ sessionId, files: [{ ...main, sha256: "ABC" }] }),
  },
  {
    why: "a sha256 that does not match the bytes",
    code: "INTEGRITY",
    archive: () =>
      buildArchive({ sessionId, files: [main, { ...file(`${sessionId}/a`), sha256: "0".repeat(64) }] }),
  },
  {
    why: "a file shorter than its manifest size (truncated archive)",
    code: "INTEGRITY",
    archive: () => buildArchive({ sessionId, files: [main, { ...file(`${sessionId}/a`, "abc"), size: 10 }] }),
  },
  {
    why: "bytes after the last file",
    code: "INTEGRITY",
    archive: () => buildArchive({ sessionId, files: [main], trailing: text("more") }),
  },
  {
    why: "a recorded raw size that does not match",
    code: "INTEGRITY",
    archive: async () => {
      const archive = await buildArchive({ sessionId, files: [main] });
      return { ...archive, rawSizeBytes: archive.rawSizeBytes + 1 };
    },
  },
  {
    why: "bad magic",
    code: "INVALID_INPUT",
    archive: () => buildArchive({ sessionId, files: [main], magic: "PK\u0003\u0004xxxx" }),
  },
  {
    why: "an unsupported version",
    code: "INVALID_INPUT",
    archive: () => buildArchive({ sessionId, files: [main], version: 2 }),
  },
  {
    why: "a manifest that is not JSON",
    code: "INVALID_INPUT",
    archive: async () => {
      const preamble = new Uint8Array(13);
      preamble.set(text("STOWSESS"));
      preamble[8] = 1;
      new DataView(preamble.buffer).setUint32(9, 5);
      const blob = await compressChunks("gzip", [preamble, text("{nope")]);
      return { sessionId, codec: "gzip" as const, blob, rawSizeBytes: 18 };
    },
  },
  {
    why: "a manifest length over the limit",
    code: "TOO_LARGE",
    limit: 4 * 1024 * 1024,
    archive: async () => {
      const preamble = new Uint8Array(13);
      preamble.set(text("STOWSESS"));
      preamble[8] = 1;
      new DataView(preamble.buffer).setUint32(9, MAX_MANIFEST_BYTES + 1);
      return {
        sessionId,
        codec: "gzip" as const,
        blob: await compressChunks("gzip", [preamble]),
        rawSizeBytes: 13,
      };
    },
  },
  {
    why: "a decompression bomb: a 300 MiB file of zeros, over the 256 MiB default",
    code: "TOO_LARGE",
    limit: 256 * 1024 * 1024,
    archive: async () => {
      const zeros = new Uint8Array(300 * 1024 * 1024);
      return buildArchive({
        sessionId,
        codec: "brotli",
        files: [main, { path: `${sessionId}/bomb`, content: zeros }],
      });
    },
  },
  {
    why: "a bomb hidden after the files: refused at its first byte, never inflated",
    code: "INTEGRITY",
    maxBytes: 1024 * 1024,
    archive: async () => ({
      ...(await buildArchive({
        sessionId,
        codec: "brotli",
        files: [main],
        trailing: new Uint8Array(64 * 1024 * 1024),
      })),
      rawSizeBytes: 100,
    }),
  },
  {
    why: "a raw size over maxBytes (refused before decompressing)",
    code: "TOO_LARGE",
    maxBytes: 1000,
    archive: async () => ({ ...(await buildArchive({ sessionId, files: [main] })), rawSizeBytes: 5000 }),
  },
  {
    why: "a truncated blob",
    code: "INTEGRITY",
    archive: async () => {
      const archive = await buildArchive({
        sessionId,
        files: [main, { path: `${sessionId}/r`, content: new Uint8Array(randomBytes(20_000)) }],
      });
      return { ...archive, blob: archive.blob.subarray(0, archive.blob.byteLength - 100) };
    },
  },
  {
    why: "a corrupted blob (brotli, no checksum: the sha256 catches it)",
    code: "INTEGRITY",
    archive: async () => {
      const archive = await buildArchive({
        sessionId,
        codec: "brotli",
        files: [main, { path: `${sessionId}/r`, content: new Uint8Array(randomBytes(20_000)) }],
      });
      const blob = archive.blob.slice();
      for (let i = blob.byteLength - 2000; i < blob.byteLength - 10; i += 53) blob[i]! ^= 0x55;
      return { ...archive, blob };
    },
  },
  {
    why: "a blob labelled with the wrong codec",
    code: "INTEGRITY",
    archive: async () => ({
      ...(await buildArchive({ sessionId, codec: "brotli", files: [main] })),
      codec: "gzip" as const,
    }),
  },
  {
    why: "an unknown codec tag",
    code: "INVALID_INPUT",
    archive: async () => ({ ...(await buildArchive({ sessionId, files: [main] })), codec: "lz4" as "gzip" }),
  },
  {
    why: "an empty blob",
    code: "INVALID_INPUT",
    archive: async () => ({ ...(await buildArchive({ sessionId, files: [main] })), blob: new Uint8Array(0) }),
  },
  {
    why: "a session id that is not a UUID",
    code: "INVALID_INPUT",
    archive: async () => ({ ...(await buildArchive({ sessionId, files: [main] })), sessionId: "../../x" }),
  },
];

describe("restoreSession refuses hostile or broken archives and leaves the target as it was", () => {
  for (const hostile of cases) {
    it(hostile.why, async () => {
      const archive = await hostile.archive();
      await hostile.plant?.();
      const before = await snapshotDirectory(configDir);
      const outsideBefore = await snapshotDirectory(outside);
      const restore = restoreSession(archive, {
        configDir,
        projectKey,
        ...(hostile.maxBytes ? { maxBytes: hostile.maxBytes } : {}),
      });
      const error = await expectStowageError(restore, hostile.code);
      if (hostile.reason) expect(error.reason).toBe(hostile.reason);
      if (hostile.limit !== undefined) expect(error.details?.limit).toBe(hostile.limit);
      expect(await snapshotDirectory(configDir)).toEqual(before);
      expect(await snapshotDirectory(outside)).toEqual(outsideBefore);
      expect(await readFile(join(outside, "secret.txt"), "utf8")).toBe("do not touch\n");
      const verified = verifySessionBlob(archive, hostile.maxBytes ? { maxBytes: hostile.maxBytes } : {});
      // What restore refuses in the blob itself, a repository refuses when the blob is stored.
      if (hostile.plant) await expect(verified).resolves.toMatchObject({ format: "archive" });
      else await expectStowageError(verified, hostile.code);
    });
  }

  it("a bomb restored into a config dir that did not exist leaves no directory behind", async () => {
    const fresh = join(base, "never-created");
    const archive = await buildArchive({
      sessionId,
      files: [main, { ...file(`${sessionId}/a`), sha256: "0".repeat(64) }],
    });
    await expectStowageError(restoreSession(archive, { configDir: fresh, projectKey }), "INTEGRITY");
    expect(await readdir(base)).not.toContain("never-created");
  });

  it.each([
    ["the projects directory", () => join(configDir, "projects")],
    ["the project directory", () => projectDir],
  ])("a symlink planted as %s is refused, never restored through", async (_where, at) => {
    await rm(at(), { recursive: true });
    await symlink(outside, at());
    const archive = await buildArchive({ sessionId, projectKey, files: [main] });
    const error = await expectStowageError(restoreSession(archive, { configDir, projectKey }), "FORBIDDEN");
    expect(error.reason).toBe("SYMLINK_REFUSED");
    expect(await snapshotDirectory(outside)).toEqual({ "secret.txt": expect.stringMatching(/^file /) });
  });

  it("the config directory itself may be a link: the caller chose it", async () => {
    const link = join(base, `config-link-${randomBytes(4).toString("hex")}`);
    await symlink(configDir, link);
    const archive = await buildArchive({ sessionId, projectKey, files: [main] });
    const restored = await restoreSession(archive, { configDir: link, projectKey });
    expect(await readFile(join(projectDir, `${sessionId}.jsonl`), "utf8")).toBe('{"type":"user"}\n');
    expect(restored.projectDir).toBe(join(link, "projects", projectKey));
  });

  it("an entry named %2e%2e inside the session is a literal file name, restored as such", async () => {
    const archive = await buildArchive({
      sessionId,
      projectKey,
      files: [main, file(`${sessionId}/%2e%2e`, "literal")],
    });
    await restoreSession(archive, { configDir, projectKey });
    expect(Object.keys(await snapshotDirectory(projectDir))).toContain(`${sessionId}/%2e%2e`);
  });
});

describe("configuration captured on request, restored among hostile things already there", () => {
  const mcpEntry = (content: string): RawFile => file("~claude.json/mcpServers.json", content);
  const servers = JSON.stringify({ mcpServers: { tiny: { command: "node" } } });

  it.each([
    ["an array", "[1]"],
    ["not JSON", "{"],
    ["a foreign shape (mcpServers a string)", '{"mcpServers":"x","projects":[]}'],
  ])("a ~/.claude.json that is %s is left byte for byte as it was", async (_what, content) => {
    const home = await mkdtemp(join(base, "home-"));
    await mkdir(join(home, ".claude"));
    await writeFile(join(home, ".claude.json"), content);
    const archive = await buildArchive({ sessionId, projectKey, files: [main, mcpEntry(servers)] });
    const restored = await restoreSession(archive, { configDir: join(home, ".claude"), projectKey });
    // A foreign shape that is still a JSON object gets the server beside what was there.
    if (content.startsWith('{"mcpServers":"x"')) {
      expect(restored.configuration?.written).toEqual(["~claude.json/mcpServers.json#mcpServers.tiny"]);
      const merged = JSON.parse(await readFile(join(home, ".claude.json"), "utf8"));
      expect(merged.projects).toEqual([]);
    } else {
      expect(restored.configuration?.skipped).toHaveLength(1);
      expect(await readFile(join(home, ".claude.json"), "utf8")).toBe(content);
    }
  });

  it("a server of the same name is kept, and everything else in ~/.claude.json too", async () => {
    const home = await mkdtemp(join(base, "home-"));
    await mkdir(join(home, ".claude"));
    const state = {
      userID: "u1",
      mcpServers: { tiny: { command: "mine" } },
      projects: { "/w": { allowedTools: ["Bash"] } },
    };
    await writeFile(join(home, ".claude.json"), JSON.stringify(state));
    const archived = JSON.stringify({
      mcpServers: { tiny: { command: "node" }, other: { command: "other" } },
      projects: { "/elsewhere": { mcpServers: { local: { command: "local" } } } },
    });
    const archive = await buildArchive({ sessionId, projectKey, files: [main, mcpEntry(archived)] });
    const restored = await restoreSession(archive, { configDir: join(home, ".claude"), projectKey });
    expect(restored.configuration).toMatchObject({
      written: [
        "~claude.json/mcpServers.json#mcpServers.other",
        "~claude.json/mcpServers.json#projects./elsewhere.mcpServers.local",
      ],
      kept: ["~claude.json/mcpServers.json#mcpServers.tiny"],
    });
    expect(JSON.parse(await readFile(join(home, ".claude.json"), "utf8"))).toEqual({
      userID: "u1",
      mcpServers: { tiny: { command: "mine" }, other: { command: "other" } },
      projects: {
        "/w": { allowedTools: ["Bash"] },
        "/elsewhere": { mcpServers: { local: { command: "local" } } },
      },
    });
  });

  it.each([
    ["an archived entry that is not JSON", "{"],
    ["an archived entry whose servers are not objects", '{"mcpServers":{"a":1,"b":"x"}}'],
  ])("%s writes nothing", async (_what, content) => {
    const home = await mkdtemp(join(base, "home-"));
    await mkdir(join(home, ".claude"));
    const archive = await buildArchive({ sessionId, projectKey, files: [main, mcpEntry(content)] });
    const restored = await restoreSession(archive, { configDir: join(home, ".claude"), projectKey });
    expect(restored.configuration?.written).toEqual([]);
    expect(await readdir(home)).toEqual([".claude"]);
  });

  it("a ~/.claude.json planted as a link is never written through", async () => {
    const home = await mkdtemp(join(base, "home-"));
    await mkdir(join(home, ".claude"));
    await symlink(join(outside, "secret.txt"), join(home, ".claude.json"));
    const archive = await buildArchive({ sessionId, projectKey, files: [main, mcpEntry(servers)] });
    const restored = await restoreSession(archive, { configDir: join(home, ".claude"), projectKey });
    expect(restored.configuration?.skipped).toEqual([
      { path: "~claude.json/mcpServers.json", reason: expect.stringContaining("link") },
    ]);
    expect(await readFile(join(outside, "secret.txt"), "utf8")).toBe("do not touch\n");
  });

  it("a memory directory planted as a link is never written through", async () => {
    await symlink(outside, join(projectDir, "memory"));
    const archive = await buildArchive({
      sessionId,
      projectKey,
      files: [main, file("~project-dir/memory/MEMORY.md", "remember")],
    });
    const restored = await restoreSession(archive, { configDir, projectKey });
    expect(restored.configuration?.skipped.map((skipped) => skipped.path)).toEqual([
      "~project-dir/memory/MEMORY.md",
    ]);
    expect(await snapshotDirectory(outside)).toEqual({ "secret.txt": expect.stringMatching(/^file /) });
  });

  it.each([
    ["codex", "~user/auth.json", "Codex's login"],
    ["codex", "~user/skills/.system/x/SKILL.md", "the system skills Codex installs"],
    ["codex", "~project-dir/memory/MEMORY.md", "Claude Code's memory in a Codex session"],
    ["codex", "~claude.json/mcpServers.json", "Claude Code's MCP servers in a Codex session"],
    ["opencode", "~user/../auth.json", "traversal out of OpenCode's config directory"],
    ["opencode", "~project/.opencode/node_modules/x/index.js", "installed packages"],
  ])("a %s archive with %s (%s) is refused", async (agent, path) => {
    const codexId = "019e1625-789d-76c0-80ab-3724b5ddb799";
    const own =
      agent === "codex"
        ? file(`2026/11/23/rollout-2026-11-23T04-00-00-${codexId}.jsonl`, "{}\n")
        : file("ses_df96f1435ffed9ABkI498J7iJN.json", "{}");
    const id = agent === "codex" ? codexId : "ses_df96f1435ffed9ABkI498J7iJN";
    const archive = await buildArchive({
      sessionId: id,
      files: [own, file(path)],
      manifest: { agent, projectKey: undefined },
    });
    await expectStowageError(verifySessionBlob(archive), "INVALID_INPUT");
  });
});
