import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { claudeSessionLocation } from "@stowage/sessions";
import { realTranscripts } from "@stowage/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ageFiles } from "./support/age-files.js";
import { stowage } from "./support/cli.js";
import { seedEmbeddedDatabase } from "./support/seed-embedded-database.js";
import { startTestApp } from "./support/test-app.js";

// Long CLI work draws one progress line on stderr where it is a terminal (a fake TTY stream here,
// in process), and nothing with --json or where stderr is a pipe or a file: the result on stdout
// is the same either way.
let dir: string;
let env: Record<string, string>;
const run = (argv: string[], stderrIsTTY: boolean) => stowage(argv, { cwd: dir, env, stderrIsTTY });
/** What a terminal shows once the escape sequences that redraw the line are gone. */
const visible = (text: string) => text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "");

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "stowage-cli-progress-"));
  env = { STOWAGE_DATA_DIR: join(dir, ".stowage") };
  await seedEmbeddedDatabase(env.STOWAGE_DATA_DIR!);
  for (const name of ["a.txt", "b.txt", "c.txt"]) await writeFile(join(dir, name), `blob ${name}`);
  await run(["blob", "put", "a.txt", "b.txt", "c.txt"], false);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("progress on a terminal", () => {
  it("blob verify: a bar over every blob, the result unchanged on stdout", async () => {
    const { stdout, stderr } = await run(["blob", "verify"], true);
    expect(stdout).toBe("3 of 3 blobs verified\n");
    expect(visible(stderr)).toContain("verifying [");
    expect(visible(stderr)).toContain("3/3 blobs");
  });

  it("uploads sweep: the keys listed so far and what was swept", async () => {
    const { stdout, stderr } = await run(["uploads", "sweep", "--older-than-days", "30", "--dry-run"], true);
    expect(stdout).toMatch(/^would delete 0 uploads/m);
    expect(visible(stderr)).toMatch(/sweeping: 0 keys/);
  });

  it("blob gc: roots, scan, then every candidate decided", async () => {
    // Older than the collection's one second of slack: on a quick machine the blobs put in
    // `beforeAll` are younger than that here, and a collection keeps every one.
    await ageFiles(join(env.STOWAGE_DATA_DIR!, "objects", "blobs"), 1200);
    const { stdout, stderr } = await run(["blob", "gc", "--grace-hours", "0", "--dry-run"], true);
    expect(stdout).toMatch(/^would delete 3 of 3 blobs/);
    expect(visible(stderr)).toContain("collecting [");
    expect(visible(stderr)).toContain("3/3 blobs (deciding)");
  });
});

describe("no progress where nobody watches it", () => {
  it.each<[string, string[], boolean]>([
    ["blob verify, stderr not a terminal", ["blob", "verify"], false],
    ["blob verify --json on a terminal", ["blob", "verify", "--json"], true],
    ["blob gc --json on a terminal", ["blob", "gc", "--dry-run", "--json"], true],
    ["blob gc, stderr not a terminal", ["blob", "gc", "--dry-run"], false],
    ["uploads sweep --json on a terminal", ["uploads", "sweep", "--older-than-days", "1", "--json"], true],
    ["uploads sweep, stderr not a terminal", ["uploads", "sweep", "--older-than-days", "1"], false],
  ])("%s: stderr stays empty", async (_name, argv, tty) => {
    const { stdout, stderr } = await run(argv, tty);
    expect(stdout).not.toBe("");
    expect(stderr).toBe("");
  });

  it("upload --json on a terminal: no bars, the results alone", async () => {
    const app = await startTestApp();
    try {
      const key = await app.keyFor({ kind: "user", id: "progress" });
      expect((await app.call("/agents/sessions", { key, json: { sessionId: "quiet" } })).status).toBe(201);
      await writeFile(join(dir, "notes.txt"), "x".repeat(10_000));
      const argv = ["upload", "notes.txt", "--session", "quiet", "--api", app.url, "--key", key];
      const quiet = await run([...argv, "--json"], true);
      expect(quiet.stderr).toBe("");
      expect(JSON.parse(quiet.stdout)).toMatchObject([{ success: true, filename: "notes.txt" }]);
      const drawn = await run(argv, true);
      expect(visible(drawn.stderr)).toContain("100%");
    } finally {
      await app.close();
    }
  });
});

const real = realTranscripts("stowage session capture|restore progress");
/** A real Claude Code 2.0.76 transcript of 1.4 MB. */
const CLAUDE = "claude-code/session-3fe1b6bc.jsonl";

describe.skipIf(!real.present)("session capture and restore of a large session", () => {
  const sessionId = real.present
    ? (real.records(CLAUDE).find((record) => typeof record.sessionId === "string")!.sessionId as string)
    : "";
  const where = () => ["--config-dir", join(dir, "agent", ".claude"), "--cwd", join(dir, "workspace")];

  beforeAll(async () => {
    await mkdir(join(dir, "workspace"), { recursive: true });
    const location = await claudeSessionLocation({
      configDir: join(dir, "agent", ".claude"),
      cwd: join(dir, "workspace"),
      sessionId,
    });
    await mkdir(dirname(location.transcriptPath), { recursive: true });
    await writeFile(location.transcriptPath, real.read(CLAUDE));
  });

  it("say what they are doing and for how long on a terminal, not with --json", async () => {
    const capture = ["session", "capture", ...where(), "--session", sessionId, "--user", "cli"];
    const captured = await run([...capture, "--request", "r1"], true);
    expect(captured.stdout).toMatch(/^stored session /);
    expect(visible(captured.stderr)).toContain(`capturing session ${sessionId}…`);
    const quiet = await run([...capture, "--request", "r2", "--json"], true);
    expect(quiet.stderr).not.toContain("capturing");

    const restore = ["session", "restore", "--request", "r1", "--user", "cli", ...where()];
    const restored = await run(restore, true);
    expect(restored.stdout).toMatch(/^restored claude-code session /);
    expect(visible(restored.stderr)).toContain(`restoring session ${sessionId}…`);
    // With --json only its notes (the resume hint) are on stderr.
    expect((await run([...restore, "--json"], true)).stderr).not.toContain("restoring");
  });
});
