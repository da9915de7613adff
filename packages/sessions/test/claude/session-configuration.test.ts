import { mkdir, readFile, realpath, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { tempDirectory } from "@stowage/test-support";
import { beforeAll, describe, expect, it } from "vitest";
import { captureSession } from "../../src/archive/capture-session.js";
import { entryPathProblem } from "../../src/archive/entry-path.js";
import { restoreSession } from "../../src/archive/restore-session.js";
import { claudeProjectKey } from "../../src/claude/project-key.js";
import { withoutClaudeSecrets as withoutSecrets } from "../../src/claude/session-configuration.js";

// The configuration captured on request (`withConfig`), in the shapes Claude Code documents:
// settings.json with an `env` map, .mcp.json with `mcpServers.<name>.{command,args,env,headers}`,
// commands/agents/skills as markdown files, installed plugins under plugins/.
const base = await tempDirectory("stowage-configuration-");
const sessionId = "3b1f6a2e-8c4d-4e5f-9a0b-1c2d3e4f5a6b";
const text = (value: string) => new TextEncoder().encode(value);

let cwd: string;
let configDir: string;

async function put(root: string, relative: string, content: string): Promise<void> {
  await mkdir(dirname(join(root, relative)), { recursive: true });
  await writeFile(join(root, relative), content);
}

const userSettings = `{
  "env": { "ANTHROPIC_API_KEY": "sk-ant-secret", "GITHUB_TOKEN": "ghp_secret", "DEBUG": "1" },
  "permissions": { "allow": ["Bash(npm test)"] }
}
`;
const projectMcp = JSON.stringify({
  mcpServers: {
    github: {
      type: "http",
      url: "https://example.invalid/mcp",
      headers: { Authorization: "Bearer ghp_secret" },
    },
    tiny: { command: "node", args: ["tiny.cjs"], env: { TINY_API_KEY: "k", TINY_MODE: "fast" } },
  },
});

beforeAll(async () => {
  await mkdir(join(base, "work"), { recursive: true });
  cwd = await realpath(join(base, "work"));
  configDir = join(base, "config");
  const key = await claudeProjectKey(cwd);
  await put(
    configDir,
    `projects/${key}/${sessionId}.jsonl`,
    `${JSON.stringify({ type: "user", sessionId })}\n`,
  );
  await put(configDir, "settings.json", userSettings);
  await put(configDir, "CLAUDE.md", "# Me\n");
  await put(configDir, "commands/review.md", "Review the diff.\n");
  await put(configDir, "skills/pdf/SKILL.md", "---\nname: pdf\n---\n");
  await put(configDir, "plugins/installed_plugins.json", '{"version":2,"plugins":{}}');
  await put(configDir, "plugins/marketplaces/acme/.git/config", "[core]\n");
  await put(configDir, "plugins/marketplaces/acme/commands/ship.md", "Ship it.\n");
  // Never captured: the install's state, credentials, telemetry, another session's nothing.
  await put(configDir, ".credentials.json", '{"claudeAiOauth":{"accessToken":"secret"}}');
  await put(configDir, "plugins/store/builtin.json", "{}");
  await put(join(base, "home"), ".claude.json", '{"primaryApiKey":"sk-secret"}');
  await put(cwd, ".mcp.json", projectMcp);
  await put(cwd, ".claude/settings.json", '{"enableAllProjectMcpServers":true}');
  await put(cwd, ".claude/agents/reviewer.md", "---\nname: reviewer\n---\n");
  await put(cwd, "src/index.ts", "export {};\n");
  // A link among the commands: reported, never followed.
  await put(base, "outside/secret.md", "outside\n");
  await symlink(join(base, "outside", "secret.md"), join(configDir, "commands", "linked.md"));
});

describe("withConfig: the configuration a resumed run needs, captured on request", () => {
  it("captures the user's and the project's configuration without its secrets, and says which were left out", async () => {
    const captured = await captureSession({ sessionId, cwd, configDir, withConfig: true });
    const paths = captured.manifest.files.map((file) => file.path);
    expect(paths.filter((path) => path.startsWith("~user/") || path.startsWith("~project/")).sort()).toEqual([
      "~project/.claude/agents/reviewer.md",
      "~project/.claude/settings.json",
      "~project/.mcp.json",
      "~user/CLAUDE.md",
      "~user/commands/review.md",
      "~user/plugins/installed_plugins.json",
      "~user/plugins/marketplaces/acme/commands/ship.md",
      "~user/settings.json",
      "~user/skills/pdf/SKILL.md",
    ]);
    expect(captured.secretsLeftOut).toEqual([
      { path: "~user/settings.json", field: "env.ANTHROPIC_API_KEY" },
      { path: "~user/settings.json", field: "env.GITHUB_TOKEN" },
      { path: "~project/.mcp.json", field: "mcpServers.github.headers.Authorization" },
      { path: "~project/.mcp.json", field: "mcpServers.tiny.env.TINY_API_KEY" },
    ]);
    expect(captured.skipped).toContainEqual({
      path: "~user/commands/linked.md",
      reason: "symlink (not followed)",
    });
    expect(captured.skipped.map((file) => file.path)).toContain("~user/plugins/marketplaces/acme/.git");
    // Without withConfig, none of it.
    const plain = await captureSession({ sessionId, cwd, configDir });
    expect(plain.manifest.files.map((file) => file.path)).toEqual([`${sessionId}.jsonl`]);
    expect(plain.secretsLeftOut).toBeUndefined();
  });

  it("restores it where Claude Code reads it, never over a file there, never through a link", async () => {
    const captured = await captureSession({ sessionId, cwd, configDir, withConfig: true });
    const into = { configDir: join(base, "new-config"), cwd: join(base, "new-work") };
    await mkdir(into.cwd);
    // The new container already has its own project settings: kept.
    await put(into.cwd, ".claude/settings.json", '{"model":"mine"}');
    const restored = await restoreSession(captured, {
      configDir: into.configDir,
      projectKey: captured.projectKey as string,
    });
    // With projectKey and no cwd, the project's files have nowhere to go.
    expect(restored.configuration?.skipped.map((file) => file.path).sort()).toEqual([
      "~project/.claude/agents/reviewer.md",
      "~project/.claude/settings.json",
      "~project/.mcp.json",
    ]);
    const again = await restoreSession(captured, { ...into });
    expect(again.configuration?.kept).toEqual(["~project/.claude/settings.json"]);
    expect(again.configuration?.unchanged).toContain("~user/settings.json");
    expect(await readFile(join(into.cwd, ".claude", "settings.json"), "utf8")).toBe('{"model":"mine"}');
    expect(await readFile(join(into.cwd, ".claude", "agents", "reviewer.md"), "utf8")).toBe(
      "---\nname: reviewer\n---\n",
    );
    expect(await readFile(join(into.configDir, "commands", "review.md"), "utf8")).toBe("Review the diff.\n");
    const settings = JSON.parse(await readFile(join(into.configDir, "settings.json"), "utf8"));
    expect(settings).toEqual({ env: { DEBUG: "1" }, permissions: { allow: ["Bash(npm test)"] } });
    const mcp = JSON.parse(await readFile(join(into.cwd, ".mcp.json"), "utf8"));
    expect(mcp.mcpServers.github.headers).toEqual({});
    expect(mcp.mcpServers.tiny.env).toEqual({ TINY_MODE: "fast" });

    // A link planted where the project's .claude directory goes: nothing is written through it.
    const planted = join(base, "planted-work");
    await mkdir(planted);
    await mkdir(join(base, "planted-target"));
    await symlink(join(base, "planted-target"), join(planted, ".claude"));
    const linked = await restoreSession(captured, { configDir: join(base, "planted-config"), cwd: planted });
    expect(linked.configuration?.skipped.map((file) => file.path).sort()).toEqual([
      "~project/.claude/agents/reviewer.md",
      "~project/.claude/settings.json",
    ]);
    expect(linked.configuration?.written).toContain("~project/.mcp.json");
  });

  it("a file without secrets is captured byte for byte; one that is not JSON is left out", () => {
    const plain = text('{\n  "model" : "opus" }');
    expect(withoutSecrets("settings.json", plain)).toEqual({ bytes: plain, leftOut: [] });
    expect(withoutSecrets("settings.json", text("{ not json"))).toHaveProperty("refused");
    expect(withoutSecrets(".mcp.json", text("[1]"))).toHaveProperty("refused");
    expect(
      withoutSecrets(".mcp.json", text('{"mcpServers":{"a":{"env":null,"headers":[1]}}}')),
    ).toMatchObject({
      leftOut: [],
    });
    const markdown = text("API_KEY=sk-not-json-so-not-parsed");
    expect(withoutSecrets("CLAUDE.md", markdown)).toEqual({ bytes: markdown, leftOut: [] });
  });

  it("entry paths: only configuration Claude Code reads, never credentials, state or the project's code", () => {
    for (const path of [
      "~user/settings.json",
      "~user/commands/a/b.md",
      "~user/plugins/cache/acme/x.md",
      "~project/.mcp.json",
      "~project/.claude/skills/pdf/SKILL.md",
    ])
      expect(entryPathProblem(path, sessionId, "claude-code"), path).toBeUndefined();
    for (const path of [
      "~user/.credentials.json",
      "~user/../.claude.json",
      "~user/plugins/store/builtin.json",
      "~user/plugins/marketplaces/acme/.git/config",
      "~user/commands/../settings.json",
      "~user/projects/-x/other.jsonl",
      "~project/src/index.ts",
      "~project/.git/config",
      "~project/.claude/settings.json/x",
      "~project/",
      "~user/commands",
    ])
      expect(entryPathProblem(path, sessionId, "claude-code"), path).toBeDefined();
  });
});
