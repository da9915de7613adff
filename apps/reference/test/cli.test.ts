import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { StowageError } from "@stowage/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCommand } from "../src/cli/command.js";
import { stowageCommand } from "../src/cli/main.js";
import { writeContainerSession } from "../src/demo/container-session.js";
import { demoScreenshot } from "../src/demo/screenshot.js";
import { startTestApp } from "./support/test-app.js";

let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "stowage-cli-"));
  env = { STOWAGE_DATA_DIR: join(dir, ".stowage") };
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Runs `stowage <argv>` in-process and returns what it printed. */
async function stowage(...argv: string[]): Promise<string> {
  const lines: string[] = [];
  await runCommand(stowageCommand, argv, { out: (line) => lines.push(line), env, cwd: dir });
  return lines.join("\n");
}

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "success",
    (err: unknown) => (StowageError.is(err) ? err.code : String(err)),
  );

describe("stowage --help", () => {
  it("documents every command and subcommand", async () => {
    const root = await stowage("--help");
    for (const name of ["serve", "demo", "blob", "session", "artifact", "upload", "keys"])
      expect(root).toContain(`  ${name}`);
    const cases: [string[], string][] = [
      [["blob", "--help"], "Usage: stowage blob <command>"],
      [["blob", "put", "--help"], "Usage: stowage blob put <file…>"],
      [["blob", "gc", "--help"], "--grace-hours <hours>"],
      [["session", "capture", "--help"], "--session <uuid>"],
      [["session", "restore", "--help"], "--request <id>"],
      [["session", "ls", "--help"], "--config-dir <dir>"],
      [["artifact", "read", "--help"], "Usage: stowage artifact read <url> [options]"],
      [["upload", "--help"], "Usage: stowage upload <file…> [options]"],
      [["keys", "create", "--help"], "--org <id>"],
      [["serve", "--help"], "Usage: stowage serve"],
      [["demo", "--help"], "--exit"],
    ];
    for (const [argv, expected] of cases) expect(await stowage(...argv)).toContain(expected);
  });

  it("refuses unknown commands and options with the help text", async () => {
    expect(await codeOf(stowage("nope"))).toBe("INVALID_INPUT");
    expect(await codeOf(stowage("blob", "put", "--nope"))).toBe("INVALID_INPUT");
  });
});

describe("stowage keys create", () => {
  it("prints a new key once; only its hash is kept", async () => {
    const printed = await stowage("keys", "create", "--user", "cli-user", "--label", "laptop");
    const key = printed.split("\n")[0]!;
    expect(key).toMatch(/^stw_/);
    const stored = await readFile(join(env.STOWAGE_DATA_DIR!, "keys", `${key.split("_")[1]}.json`), "utf8");
    expect(stored).not.toContain(key);
    expect(await codeOf(stowage("keys", "create", "--user", "a", "--org", "b"))).toBe("INVALID_INPUT");
    expect(await codeOf(stowage("keys", "create"))).toBe("INVALID_INPUT");
  });
});

describe("stowage blob", () => {
  it("puts, gets, verifies and garbage-collects blobs", async () => {
    const file = join(dir, "shot.png");
    const other = join(dir, "orphan.bin");
    await writeFile(file, demoScreenshot());
    await writeFile(other, "nobody references me");
    const put = await stowage("blob", "put", file, other);
    const [ref, orphanRef] = [...put.matchAll(/blob:sha256:[a-f0-9]{64}/g)].map((match) => match[0]);
    expect(put).toContain("stored");

    const out = join(dir, "copy.png");
    await stowage("blob", "get", ref!, "--out", out);
    expect((await readFile(out)).equals(demoScreenshot())).toBe(true);
    expect(await stowage("blob", "verify")).toContain("2 of 2 blobs verified");

    // A session file referencing the screenshot keeps it; the orphan goes once past the grace period.
    const sessions = join(env.STOWAGE_DATA_DIR!, "agent-sessions");
    await rm(sessions, { recursive: true, force: true });
    await mkdir(sessions, { recursive: true });
    await writeFile(
      join(sessions, "2026-11-21T10-00-00-000Z_s1.jsonl"),
      `${JSON.stringify({ data: ref })}\n`,
    );
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(await stowage("blob", "gc", "--grace-hours", "0", "--dry-run")).toContain(
      "would delete 1 of 2 blobs",
    );
    expect(await stowage("blob", "gc", "--grace-hours", "0")).toContain("deleted 1 of 2 blobs");
    expect(await codeOf(stowage("blob", "get", orphanRef!, "--out", join(dir, "gone")))).toBe("NOT_FOUND");
    expect(await codeOf(stowage("blob", "gc", "--grace-hours", "-1"))).toBe("INVALID_INPUT");
  });

  it("reports a corrupted blob", async () => {
    const file = join(dir, "fragile.txt");
    await writeFile(file, "fragile content");
    const ref = /blob:sha256:([a-f0-9]{64})/.exec(await stowage("blob", "put", file))![1]!;
    await writeFile(
      join(env.STOWAGE_DATA_DIR!, "objects", "blobs", ref.slice(0, 2), ref),
      "tampered content",
    );
    expect(await codeOf(stowage("blob", "verify", ref))).toBe("INTEGRITY");
    expect(await codeOf(stowage("blob", "get", "../../etc/passwd"))).toBe("INVALID_INPUT");
  });
});

describe("stowage session", () => {
  it("lists, captures and restores a Claude Code session", async () => {
    const configDir = join(dir, "container", ".claude");
    const cwd = join(dir, "workspace");
    await mkdir(cwd, { recursive: true });
    const container = await writeContainerSession({ configDir, cwd, turns: 20 });
    expect(await stowage("session", "ls", "--cwd", cwd, "--config-dir", configDir)).toContain(
      container.sessionId,
    );
    const captured = await stowage(
      "session",
      "capture",
      "--cwd",
      cwd,
      "--config-dir",
      configDir,
      "--session",
      container.sessionId,
      "--request",
      "cli-req",
    );
    expect(captured).toContain(
      `stored session ${container.sessionId} for request cli-req: ${container.files.length} files`,
    );
    const transcript = await readFile(join(container.projectDir, `${container.sessionId}.jsonl`));
    await rm(join(dir, "container"), { recursive: true, force: true });
    const restoreTo = join(dir, "fresh", ".claude");
    const restored = await stowage(
      "session",
      "restore",
      "--cwd",
      cwd,
      "--config-dir",
      restoreTo,
      "--request",
      "cli-req",
    );
    expect(restored).toContain(`restored session ${container.sessionId}: ${container.files.length} files`);
    const again = await readFile(
      join(restoreTo, "projects", container.projectDir.split("/").pop()!, `${container.sessionId}.jsonl`),
    );
    expect(again.equals(transcript)).toBe(true);
    expect(await codeOf(stowage("session", "restore", "--cwd", cwd, "--request", "nothing-stored"))).toBe(
      "NOT_FOUND",
    );
    expect(
      await codeOf(stowage("session", "capture", "--cwd", cwd, "--session", "../x", "--request", "r")),
    ).toBe("INVALID_INPUT");
  });
});

describe("stowage artifact read and stowage upload", () => {
  it("reads agent:// with a query and uploads files through a running server", async () => {
    const app = await startTestApp();
    try {
      const session = await app.server.services.agentSessions.create("cli-session");
      const { outputId } = await session.artifacts.allocateAgentOutput("Plan");
      await session.artifacts.writeAgentOutput(outputId, JSON.stringify({ steps: ["read", "fix"] }));
      const appEnv = { STOWAGE_DATA_DIR: app.dataDir };
      const read = async (...argv: string[]) => {
        const lines: string[] = [];
        await runCommand(stowageCommand, argv, { out: (line) => lines.push(line), env: appEnv, cwd: dir });
        return lines.join("\n");
      };
      expect(
        await read("artifact", "read", `agent://${outputId}?q=.steps[1]`, "--session", "cli-session"),
      ).toContain("fix");
      expect(await codeOf(read("artifact", "read", "artifact://../../x", "--session", "cli-session"))).toBe(
        "INVALID_INPUT",
      );

      const key = await app.keyFor({ kind: "user", id: "uploader" });
      expect((await app.call("/agents/sessions", { key, json: { sessionId: "cli-session" } })).status).toBe(
        201,
      );
      const file = join(dir, "page.png");
      await writeFile(file, demoScreenshot());
      const uploaded = await read("upload", file, "--session", "cli-session", "--api", app.url, "--key", key);
      expect(uploaded).toContain("uploaded page.png");
      const listed = (await (await app.call("/agents/cli-session/artifacts", { key })).json()) as {
        artifacts: { filename: string }[];
      };
      expect(listed.artifacts.map((a) => a.filename)).toEqual(["page.png"]);
      const refused = read(
        "upload",
        join(dir, "missing.png"),
        "--session",
        "cli-session",
        "--api",
        app.url,
        "--key",
        key,
      );
      expect(await codeOf(refused)).toBe("UNAVAILABLE");
      expect(await codeOf(read("upload", file, "--session", "cli-session", "--api", app.url))).toBe(
        "UNAUTHORIZED",
      );
    } finally {
      await app.close();
    }
  });
});
