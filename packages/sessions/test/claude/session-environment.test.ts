import { mkdir, readFile, realpath, stat, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { createBlobStore } from "@stowage/blob-store";
import { createMemoryObjectStore } from "@stowage/core";
import { tempDirectory } from "@stowage/test-support";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { captureSession } from "../../src/archive/capture-session.js";
import { entryPathProblem } from "../../src/archive/entry-path.js";
import { restoreSession } from "../../src/archive/restore-session.js";
import { claudeProjectKey } from "../../src/claude/project-key.js";
import { transcriptPlanSlugs } from "../../src/claude/session-environment.js";

// A session's files in Claude Code's config directory, laid out as Claude Code 2.1.330 writes
// them (seen in test/agent-environment.int.test.ts): file-history/<id>/<hash>@v<n>,
// tasks/<id>/<n>.json beside a .lock, session-env/<id>/, plans/<slug>.md named by the
// transcript's `slug`; and todos/<id>-agent-<id>.json as earlier versions wrote them.
const base = await tempDirectory("stowage-environment-");
const sessionId = "3b1f6a2e-8c4d-4e5f-9a0b-1c2d3e4f5a6b";
const otherId = "9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a";
const slug = "plan-the-work-merry-stallman";

const line = (record: Record<string, unknown>) => `${JSON.stringify(record)}\n`;
const task = (id: string, subject: string, status: string) =>
  `${JSON.stringify({ id, subject, description: subject, activeForm: subject, status, blocks: [], blockedBy: [] }, null, 2)}`;

let cwd: string;
let configDir: string;
/** Every file of this session, relative to the config directory, with its bytes. */
const own = new Map<string, string | Buffer>();

async function putIn(root: string, relative: string, content: string | Buffer): Promise<void> {
  await mkdir(dirname(join(root, relative)), { recursive: true });
  await writeFile(join(root, relative), content);
}
const put = (relative: string, content: string | Buffer) => putIn(configDir, relative, content);

beforeAll(async () => {
  await mkdir(join(base, "work"), { recursive: true });
  cwd = await realpath(join(base, "work"));
  configDir = join(base, "config");
  const key = await claudeProjectKey(cwd);
  const transcript =
    line({ type: "user", sessionId, uuid: "u1", message: { role: "user", content: "Plan the work" } }) +
    line({
      type: "assistant",
      sessionId,
      slug,
      uuid: "a1",
      // Another session's slug, quoted in a tool result (escaped) and nested in an object: not ours.
      message: { role: "assistant", content: [{ type: "text", text: '{"slug":"quiet-blue-fox"}' }] },
      toolUseResult: { slug: "nested-red-owl" },
    });
  const files: Record<string, string | Buffer> = {
    [`projects/${key}/${sessionId}.jsonl`]: transcript,
    [`file-history/${sessionId}/0816f5cf4a1d603d@v2`]: "hello\n",
    [`file-history/${sessionId}/0816f5cf4a1d603d@v3`]: "hello edited\n",
    // A checkpoint of a binary file: every byte value, no line ends where a text has them.
    [`file-history/${sessionId}/5f0e1d2c3b4a6978@v2`]: Buffer.from(
      Array.from({ length: 4096 }, (_, i) => (i * 7) % 256),
    ),
    [`tasks/${sessionId}/1.json`]: task("1", "write hello", "completed"),
    [`tasks/${sessionId}/2.json`]: task("2", "edit hello", "pending"),
    [`session-env/${sessionId}/sessionstart-hook-0.sh`]: "export FOO=bar\n",
    [`todos/${sessionId}-agent-${sessionId}.json`]: '[{"content":"x","status":"pending","activeForm":"x"}]',
    [`plans/${slug}.md`]: "# Plan\n",
    [`plans/${slug}-agent-a15bcd0976c35b6ae.md`]: "# Subagent plan\n",
  };
  for (const [relative, content] of Object.entries(files)) {
    await put(relative, content);
    own.set(relative, content);
  }
  // Machine-local and other sessions' files beside them: never captured.
  await put(`tasks/${sessionId}/.lock`, "");
  await put(`file-history/${otherId}/aaaaaaaaaaaaaaaa@v2`, "other\n");
  await put(`tasks/${otherId}/1.json`, task("1", "other", "pending"));
  await put(`todos/${otherId}-agent-${otherId}.json`, "[]");
  await put("plans/quiet-blue-fox.md", "other plan\n");
  await put("plans/nested-red-owl.md", "other plan\n");
  await put("settings.json", '{"env":{"ANTHROPIC_API_KEY":"sk-secret"}}');
  await put(`shell-snapshots/snapshot-bash-1.sh`, "alias ll='ls -l'\n");
  // A link among the session's checkpoints: reported, never followed.
  await writeFile(join(base, "outside.txt"), "outside\n");
  await symlink(join(base, "outside.txt"), join(configDir, "file-history", sessionId, "linked@v1"));
});

const archivePath = (relative: string, key: string) =>
  relative.startsWith(`projects/${key}/`) ? relative.slice(`projects/${key}/`.length) : `~config/${relative}`;

describe("a Claude Code session's files in the config directory", () => {
  it("captures only this session's, restores them byte-identical with their times, and again over themselves", async () => {
    const captured = await captureSession({ sessionId, cwd, configDir });
    const key = captured.projectKey as string;
    expect(captured.manifest.files.map((file) => file.path).sort()).toEqual(
      [...own.keys()].map((relative) => archivePath(relative, key)).sort(),
    );
    expect(captured.skipped).toContainEqual({
      path: `~config/file-history/${sessionId}/linked@v1`,
      reason: "symlink (not followed)",
    });

    const into = join(base, "restored-config");
    const restored = await restoreSession(captured, { cwd, configDir: into });
    expect(restored.projectDir).toBe(join(into, "projects", key));
    for (const [relative, content] of own) {
      expect(await readFile(join(into, relative))).toEqual(Buffer.from(content));
      expect(Math.round((await stat(join(into, relative))).mtimeMs)).toBe(
        Math.round((await stat(join(configDir, relative))).mtimeMs),
      );
    }
    // Restored again over itself: the plan is this session's (its transcript names the slug).
    await writeFile(join(into, "plans", `${slug}.md`), "# Plan, edited since\n");
    const again = await restoreSession(captured, { cwd, configDir: into });
    expect(again.replaced).toContain(`~config/plans/${slug}.md`);
    expect(await readFile(join(into, "plans", `${slug}.md`), "utf8")).toBe("# Plan\n");
  });

  it("kept as chunks in a blob store, restores the same files", async () => {
    const blobs = createBlobStore({ store: createMemoryObjectStore() });
    const captured = await captureSession({ sessionId, cwd, configDir, blobs });
    const into = join(base, "chunked-config");
    await restoreSession(captured, { cwd, configDir: into, blobs });
    for (const [relative, content] of own)
      expect(await readFile(join(into, relative))).toEqual(Buffer.from(content));
  });

  it("a link planted at a per-session directory or at plans/ is reported, never followed", async () => {
    const linked = join(base, "linked-config");
    const key = await claudeProjectKey(cwd);
    await putIn(linked, `projects/${key}/${sessionId}.jsonl`, line({ type: "user", sessionId, slug }));
    await mkdir(join(base, "elsewhere"), { recursive: true });
    await writeFile(join(base, "elsewhere", "1.json"), "not the session's");
    await writeFile(join(base, "elsewhere", `${slug}.md`), "not the session's");
    await mkdir(join(linked, "tasks"), { recursive: true });
    await symlink(join(base, "elsewhere"), join(linked, "tasks", sessionId));
    await symlink(join(base, "elsewhere"), join(linked, "plans"));
    const captured = await captureSession({ sessionId, cwd, configDir: linked });
    expect(captured.manifest.files.map((file) => file.path)).toEqual([`${sessionId}.jsonl`]);
    expect(captured.skipped).toEqual([
      { path: `~config/tasks/${sessionId}`, reason: "symlink (not followed)" },
      { path: "~config/plans", reason: "symlink (not followed)" },
    ]);
  });

  it("includeEnvironment: false captures the project directory's files only", async () => {
    const captured = await captureSession({ sessionId, cwd, configDir, includeEnvironment: false });
    expect(captured.manifest.files.map((file) => file.path)).toEqual([`${sessionId}.jsonl`]);
  });

  it("a transcript names its plans by the top-level slug of its lines only", () => {
    const text = (value: string) => new TextEncoder().encode(value);
    expect(
      transcriptPlanSlugs(text(line({ slug: "a-b" }) + line({ slug: "a-b" }) + line({ slug: "c" }))),
    ).toEqual(["a-b", "c"]);
    expect(
      transcriptPlanSlugs(text(line({ x: { slug: "nested" } }) + line({ text: '"slug":"quoted"' }))),
    ).toEqual([]);
    // Hostile: not a slug, a path, a broken line, an enormous one.
    expect(
      transcriptPlanSlugs(
        text(
          `{"slug":"../../etc"}\n{"slug":"UPPER"}\n{"slug":"ok-slug"\n${line({ slug: "x".repeat(129) })}${line({ slug: "" })}`,
        ),
      ),
    ).toEqual([]);
  });

  it("a transcript's bytes are read as UTF-8 text: marks, other scripts and broken bytes around a slug", () => {
    const bytes = (...parts: (string | number[])[]) =>
      Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part) : Buffer.from(part))));
    // A byte-order mark starts the text (dropped by a decoder), or a line in the middle (JSON
    // refuses it there); multi-byte characters and a stray byte before the key; no final newline.
    expect(
      transcriptPlanSlugs(
        bytes(
          [0xef, 0xbb, 0xbf],
          line({ slug: "first" }),
          [0xef, 0xbb, 0xbf],
          line({ slug: "after-a-mark" }),
          `{"text":"ünïcødé 日本","slug":"wide"}\n`,
          `{"text":"`,
          [0xc3],
          `","slug":"stray-byte"}\n`,
          `{"slug":"last"}`,
        ),
      ),
    ).toEqual(["first", "wide", "stray-byte", "last"]);
    // A key that follows a slug's closing quote is not a key of its own.
    expect(transcriptPlanSlugs(bytes(`{"slug":"a"slug":"b"}\n`, line({ slug: "c" })))).toEqual(["c"]);
  });

  it("a line holding many slug keys is parsed once, whatever it holds", () => {
    const hostile = `{"a":"${Array.from({ length: 1_000 }, (_, n) => `"slug":"s${n}"`).join(",")}}\n`;
    const parse = vi.spyOn(JSON, "parse");
    try {
      expect(transcriptPlanSlugs(Buffer.from(hostile + line({ slug: "real" })))).toEqual(["real"]);
      expect(parse).toHaveBeenCalledTimes(2);
    } finally {
      parse.mockRestore();
    }
  });

  it("entry paths under ~config/ name only this session's files", () => {
    const ok = [
      `~config/file-history/${sessionId}/0816f5cf4a1d603d@v2`,
      `~config/tasks/${sessionId}/1.json`,
      `~config/session-env/${sessionId}/sessionstart-hook-0.sh`,
      `~config/todos/${sessionId}-agent-${sessionId}.json`,
      `~config/plans/${slug}.md`,
      `~config/plans/${slug}-agent-a15bcd0976c35b6ae.md`,
    ];
    for (const path of ok) expect(entryPathProblem(path, sessionId, "claude-code"), path).toBeUndefined();
    // Codex and OpenCode archives hold no config-directory files.
    expect(entryPathProblem(ok[1], sessionId, "codex")).toBeDefined();
    expect(entryPathProblem(ok[1], sessionId, "opencode")).toBeDefined();
  });
});
