import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { captureSession } from "../../src/archive/capture-session.js";
import { restoreSession } from "../../src/archive/restore-session.js";
import { withoutJsoncSecrets, withoutTomlSecrets } from "../../src/configuration/config-file-secrets.js";

// Secrets in the fields the agents document: Codex's config.toml (`mcp_servers.<n>.env`,
// `http_headers`, `bearer_token`, `model_providers.<id>.http_headers`, `experimental_bearer_token`,
// `shell_environment_policy.set`), OpenCode's opencode.json(c) (`provider.<id>.options.apiKey`,
// `options.headers`, `mcp.<n>.headers`, `mcp.<n>.environment`). Expected files written by hand.
const text = (value: string) => new TextEncoder().encode(value);
const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

const codexConfig = `model = "gpt-5" # the default model

[mcp_servers.tiny]
command = "node"
args = ["tiny.cjs"]
env = { TINY_API_KEY = "k-secret", TINY_MODE = "fast" }

[mcp_servers.remote]
url = "https://mcp.example.invalid/mcp"
bearer_token_env_var = "REMOTE_TOKEN"
http_headers = { "X-Api-Key" = "h-secret" }
env_http_headers = { "X-Team" = "TEAM_HEADER" }

[model_providers.proxy]
name = "proxy"
base_url = "https://proxy.example.invalid/v1"
env_key = "PROXY_KEY"
experimental_bearer_token = "b-secret"

[shell_environment_policy]
set = { GITHUB_TOKEN = "g-secret", PAGER = "cat" }
`;

describe("secrets left out of Codex's config.toml", () => {
  it("leaves out literal secrets, keeps the names of variables that hold them, and re-serialises", () => {
    const vetted = withoutTomlSecrets(text(codexConfig));
    expect("leftOut" in vetted && vetted.leftOut).toEqual([
      "mcp_servers.tiny.env.TINY_API_KEY",
      "mcp_servers.remote.http_headers.X-Api-Key",
      "model_providers.proxy.experimental_bearer_token",
      "shell_environment_policy.set.GITHUB_TOKEN",
    ]);
    const out = decode((vetted as { bytes: Uint8Array }).bytes);
    for (const secret of ["k-secret", "h-secret", "b-secret", "g-secret"]) expect(out).not.toContain(secret);
    for (const kept of [
      'TINY_MODE = "fast"',
      '"REMOTE_TOKEN"',
      '"TEAM_HEADER"',
      '"PROXY_KEY"',
      'PAGER = "cat"',
    ]) {
      expect(out).toContain(kept);
    }
  });

  it("keeps a file without secrets byte for byte, comments and all", () => {
    const plain = text('# mine\nmodel = "gpt-5"\n\n[mcp_servers.tiny]\ncommand = "node"\n');
    const vetted = withoutTomlSecrets(plain);
    expect(vetted).toEqual({ bytes: plain, leftOut: [] });
  });

  it.each([
    ["not TOML", 'model = "gpt-5\n'],
    ["a duplicate table", "[a]\nx = 1\n[a]\nx = 2\n"],
    ["not UTF-8", "\u0000"],
  ])("refuses %s", (_name, body) => {
    const bytes = body === "\u0000" ? new Uint8Array([0x6d, 0x3d, 0xff, 0xfe]) : text(body);
    expect(withoutTomlSecrets(bytes)).toHaveProperty("refused");
  });

  it("refuses a file nested deeper than it walks", () => {
    const deep = `a = ${"[".repeat(100)}1${"]".repeat(100)}\n`;
    expect(withoutTomlSecrets(text(deep))).toHaveProperty("refused");
  });
});

const opencodeConfig = `{
  // the mock provider
  "$schema": "https://opencode.ai/config.json",
  "provider": {
    "mock": {
      "npm": "@ai-sdk/openai-compatible",
      "options": { "baseURL": "http://127.0.0.1:1/v1", "apiKey": "a-secret", "headers": { "X-Org": "o-secret" } },
      "models": { "mock-model": {} },
    },
  },
  "mcp": {
    "tiny": { "type": "local", "command": ["node", "tiny.cjs"], "environment": { "TINY_TOKEN": "t-secret", "TINY_MODE": "fast" } },
    "remote": { "type": "remote", "url": "https://mcp.example.invalid", "headers": { "Authorization": "Bearer r-secret" } },
  },
}
`;

describe("secrets left out of OpenCode's opencode.json(c)", () => {
  it("cuts each secret out and keeps the rest, comments included", () => {
    const vetted = withoutJsoncSecrets(text(opencodeConfig));
    expect("leftOut" in vetted && vetted.leftOut).toEqual([
      "provider.mock.options.apiKey",
      "provider.mock.options.headers.X-Org",
      "mcp.tiny.environment.TINY_TOKEN",
      "mcp.remote.headers.Authorization",
    ]);
    const out = decode((vetted as { bytes: Uint8Array }).bytes);
    for (const secret of ["a-secret", "o-secret", "t-secret", "r-secret"]) expect(out).not.toContain(secret);
    expect(out).toContain("// the mock provider");
    expect(out).toContain('"TINY_MODE": "fast"');
    expect(out).toContain('"baseURL": "http://127.0.0.1:1/v1"');
  });

  it("keeps a file without secrets byte for byte", () => {
    const plain = text('{ "model": "mock/mock-model", // mine\n "autoupdate": false }\n');
    expect(withoutJsoncSecrets(plain)).toEqual({ bytes: plain, leftOut: [] });
  });

  it.each([
    ["not JSON", '{ "model": '],
    ["an array", "[1, 2]"],
    ["nested too deep", `{"a": ${"[".repeat(5000)}${"]".repeat(5000)}}`],
  ])("refuses %s", (_name, body) => {
    expect(withoutJsoncSecrets(text(body))).toHaveProperty("refused");
  });
});

describe("Codex's configuration captured on request", () => {
  it("captures config.toml without its secrets, AGENTS.md, prompts and skills (never skills/.system) and restores them create-only", async () => {
    const base = await tempDirectory("stowage-codex-config-");
    const codexHome = join(base, "codex");
    const sessionId = "019e1625-789d-76c0-80ab-3724b5ddb799";
    const put = async (path: string, body: string) => {
      await mkdir(dirname(join(codexHome, path)), { recursive: true });
      await writeFile(join(codexHome, path), body);
    };
    const meta = { type: "session_meta", payload: { id: sessionId, cli_version: "0.169.0", cwd: "/work" } };
    await put(
      `sessions/2026/11/23/rollout-2026-11-23T04-00-00-${sessionId}.jsonl`,
      `${JSON.stringify(meta)}\n`,
    );
    await put("config.toml", codexConfig);
    await put("AGENTS.md", "Always answer in haiku.\n");
    await put("prompts/review.md", "Review the diff.\n");
    await put("skills/pdf/SKILL.md", "---\nname: pdf\n---\n");
    await put("skills/.system/installer/SKILL.md", "---\nname: installer\n---\n");
    await put("auth.json", '{"OPENAI_API_KEY":"sk-secret"}');

    const captured = await captureSession({ agent: "codex", sessionId, codexHome, withConfig: true });
    const paths = captured.manifest.files.map((file) => file.path);
    expect(paths.slice(1)).toEqual([
      "~user/config.toml",
      "~user/AGENTS.md",
      "~user/prompts/review.md",
      "~user/skills/pdf/SKILL.md",
    ]);
    expect(captured.skipped).toContainEqual({
      path: "~user/skills/.system",
      reason: expect.stringContaining("system skills"),
    });
    expect(captured.secretsLeftOut).toContainEqual({
      path: "~user/config.toml",
      field: "mcp_servers.tiny.env.TINY_API_KEY",
    });

    const restoredHome = join(base, "restored");
    await mkdir(restoredHome);
    await writeFile(join(restoredHome, "AGENTS.md"), "My own rules.\n");
    const restored = await restoreSession(captured, { codexHome: restoredHome });
    expect(restored.configuration).toEqual({
      written: ["~user/config.toml", "~user/prompts/review.md", "~user/skills/pdf/SKILL.md"],
      unchanged: [],
      kept: ["~user/AGENTS.md"],
      skipped: [],
    });
    expect(await readFile(join(restoredHome, "AGENTS.md"), "utf8")).toBe("My own rules.\n");
    expect(await readFile(join(restoredHome, "prompts/review.md"), "utf8")).toBe("Review the diff.\n");
    expect(await readFile(join(restoredHome, "config.toml"), "utf8")).not.toContain("k-secret");
    // The rollout is where it was, beside the configuration.
    expect(restored.transcriptPath).toBe(
      join(restoredHome, "sessions/2026/11/23", `rollout-2026-11-23T04-00-00-${sessionId}.jsonl`),
    );
  });
});
