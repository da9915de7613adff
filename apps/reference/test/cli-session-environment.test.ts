// `stowage session capture` takes a Claude Code session's files in the config directory with it
// (rewind checkpoints, the task list), and `--with-config` the configuration a resumed run needs,
// its secrets left out and listed; `session restore` puts both back where the agent (Claude Code, Codex) looks.
// A real transcript; the other files in the shapes Claude Code 2.1.330 writes them.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { claudeSessionLocation } from "@stowage/sessions";
import { realTranscripts, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { stowage as run } from "./support/cli.js";
import { seedEmbeddedDatabase } from "./support/seed-embedded-database.js";

const real = realTranscripts("stowage session capture --with-config");
/** A real Claude Code 2.1.4 transcript. */
const CLAUDE = "claude-code/session-624a4a58.jsonl";

describe.skipIf(!real.present)("stowage session capture --with-config and restore", () => {
  it("captures the session's environment and, on request, its configuration without secrets; restores both", async () => {
    const dir = await tempDirectory("stowage-cli-environment-");
    const env = { STOWAGE_DATA_DIR: join(dir, ".stowage") };
    await seedEmbeddedDatabase(env.STOWAGE_DATA_DIR);
    const stowage = async (...argv: string[]) => (await run(argv, { cwd: dir, env })).stdout;
    const sessionId = real.records(CLAUDE).find((record) => typeof record.sessionId === "string")!
      .sessionId as string;
    const configDir = join(dir, "container", ".claude");
    const cwd = join(dir, "workspace");
    const put = async (path: string, content: string | Uint8Array) => {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, content);
    };
    const location = await claudeSessionLocation({ configDir, cwd, sessionId });
    await put(location.transcriptPath, real.read(CLAUDE));
    await put(join(configDir, "file-history", sessionId, "0816f5cf4a1d603d@v2"), "hello\n");
    await put(
      join(configDir, "tasks", sessionId, "1.json"),
      '{"id":"1","subject":"ship","status":"pending"}',
    );
    await put(
      join(configDir, "settings.json"),
      '{"env":{"ANTHROPIC_API_KEY":"sk-ant-secret"},"model":"opus"}',
    );
    await put(
      join(cwd, ".mcp.json"),
      '{"mcpServers":{"gh":{"url":"https://x.invalid","headers":{"Authorization":"Bearer t"}}}}',
    );
    await put(join(cwd, ".claude", "commands", "review.md"), "Review the diff.\n");
    await put(join(location.projectDir, "memory", "MEMORY.md"), "The build uses bazel.\n");

    const captured = JSON.parse(
      await stowage(
        ...["session", "capture", "--config-dir", configDir, "--cwd", cwd, "--session", sessionId],
        ...["--request", "req-env", "--user", "cli", "--with-config", "--with-memory", "--json"],
      ),
    ) as { files: number; secretsLeftOut: { path: string; field: string }[] };
    // The transcript, two environment files, the user's settings, the project's two files, its memory.
    expect(captured.files).toBe(7);
    expect(captured.secretsLeftOut).toEqual([
      { path: "~user/settings.json", field: "env.ANTHROPIC_API_KEY" },
      { path: "~project/.mcp.json", field: "mcpServers.gh.headers.Authorization" },
    ]);

    const into = { configDir: join(dir, "new", ".claude"), cwd: join(dir, "new-workspace") };
    await mkdir(into.cwd, { recursive: true });
    const restored = JSON.parse(
      await stowage(
        ...["session", "restore", "--request", "req-env", "--user", "cli"],
        ...["--config-dir", into.configDir, "--cwd", into.cwd, "--json"],
      ),
    ) as { files: number; configuration: { written: string[] } };
    expect(restored.files).toBe(7);
    expect(restored.configuration.written.sort()).toEqual([
      "~project-dir/memory/MEMORY.md",
      "~project/.claude/commands/review.md",
      "~project/.mcp.json",
      "~user/settings.json",
    ]);
    const restoredKey = (await claudeSessionLocation({ ...into, sessionId })).projectDir;
    expect(await readFile(join(restoredKey, "memory", "MEMORY.md"), "utf8")).toBe("The build uses bazel.\n");
    expect(
      await readFile(join(into.configDir, "file-history", sessionId, "0816f5cf4a1d603d@v2"), "utf8"),
    ).toBe("hello\n");
    expect(await readFile(join(into.configDir, "tasks", sessionId, "1.json"), "utf8")).toContain('"ship"');
    expect(JSON.parse(await readFile(join(into.configDir, "settings.json"), "utf8"))).toEqual({
      env: {},
      model: "opus",
    });
    expect(await readFile(join(into.cwd, ".claude", "commands", "review.md"), "utf8")).toBe(
      "Review the diff.\n",
    );
  });

  it("--with-memory is Claude Code's only", async () => {
    const dir = await tempDirectory("stowage-cli-environment-memory-");
    const argv = [
      "session",
      "capture",
      "--agent",
      "codex",
      "--session",
      "x",
      "--request",
      "r",
      "--user",
      "cli",
    ];
    await expect(
      run([...argv, "--with-memory"], { cwd: dir, env: { STOWAGE_DATA_DIR: join(dir, ".stowage") } }),
    ).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });

  it("--with-config takes Codex's config.toml without its secrets and AGENTS.md; restore puts them in the new CODEX_HOME", async () => {
    const dir = await tempDirectory("stowage-cli-environment-codex-");
    const env = { STOWAGE_DATA_DIR: join(dir, ".stowage") };
    await seedEmbeddedDatabase(env.STOWAGE_DATA_DIR);
    const stowage = async (...argv: string[]) => (await run(argv, { cwd: dir, env })).stdout;
    const name = "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl";
    const codexHome = join(dir, "container", ".codex");
    const rollout = join(codexHome, "sessions", "2026", "05", "11", name);
    await mkdir(dirname(rollout), { recursive: true });
    await writeFile(rollout, real.read(`codex/${name}`));
    await writeFile(
      join(codexHome, "config.toml"),
      '[mcp_servers.gh]\nurl = "https://x.invalid/mcp"\nhttp_headers = { Authorization = "Bearer t" }\n',
    );
    await writeFile(join(codexHome, "AGENTS.md"), "Answer briefly.\n");
    const captured = JSON.parse(
      await stowage(
        ...["session", "capture", "--agent", "codex", "--codex-home", codexHome, "--cwd", dir],
        ...["--session", "019e1625-789d-76c0-80ab-3724b5ddb799", "--request", "req-codex"],
        ...["--user", "cli", "--with-config", "--json"],
      ),
    ) as { files: number; secretsLeftOut: { path: string; field: string }[] };
    expect(captured.files).toBe(3);
    expect(captured.secretsLeftOut).toEqual([
      { path: "~user/config.toml", field: "mcp_servers.gh.http_headers.Authorization" },
    ]);
    const into = join(dir, "new", ".codex");
    const restored = JSON.parse(
      await stowage(
        ...["session", "restore", "--request", "req-codex", "--user", "cli"],
        ...["--codex-home", into, "--json"],
      ),
    ) as { configuration: { written: string[] } };
    expect(restored.configuration.written.sort()).toEqual(["~user/AGENTS.md", "~user/config.toml"]);
    expect(await readFile(join(into, "AGENTS.md"), "utf8")).toBe("Answer briefly.\n");
    const config = await readFile(join(into, "config.toml"), "utf8");
    expect(config).toContain('url = "https://x.invalid/mcp"');
    expect(config).not.toContain("Bearer t");
  });
});
