import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tempDirectory } from "@stowage/test-support";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AGENT_CLI_PINS, agentCliCacheRoot, INSTALL_MARKER, installAgentCli } from "../src/index.js";

// These tests never reach npm: PATH is emptied, so an attempted install fails at once.
const root = await tempDirectory("stowage-agent-cli-cache-");
let caseNumber = 0;

/** A fresh cache root with, optionally, a finished install of `name` in it. */
async function cacheWith(name: keyof typeof AGENT_CLI_PINS, parts: { marker: boolean; executable: boolean }) {
  const cacheRoot = join(root, `case-${caseNumber++}`);
  const pin = AGENT_CLI_PINS[name];
  const dir = join(cacheRoot, `${pin.packageName.replace("/", "+")}@${pin.version}`);
  const executable = join(dir, pin.command);
  await mkdir(join(executable, ".."), { recursive: true });
  if (parts.executable) await writeFile(executable, "#!/bin/sh\n");
  if (parts.marker) await writeFile(join(dir, INSTALL_MARKER), "{}\n");
  return { cacheRoot, dir, executable };
}

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

function offline(ci: boolean) {
  vi.stubEnv("PATH", "/nonexistent");
  vi.stubEnv("CI", ci ? "true" : "");
  vi.spyOn(console, "warn").mockImplementation(() => {});
}

describe.skipIf(process.platform !== "linux" || process.arch !== "x64")("installAgentCli", () => {
  it("reuses a complete install (marker and executable present) without running npm", async () => {
    offline(true);
    const { cacheRoot, dir, executable } = await cacheWith("claude-code", { marker: true, executable: true });
    expect(await installAgentCli("claude-code", { cacheRoot })).toEqual({
      ready: true,
      name: "claude-code",
      version: AGENT_CLI_PINS["claude-code"].version,
      dir,
      command: executable,
      args: [],
    });
  });

  it("starts a Node entry point (Codex's wrapper) with this process's node", async () => {
    offline(true);
    const { cacheRoot, executable } = await cacheWith("codex", { marker: true, executable: true });
    const cli = await installAgentCli("codex", { cacheRoot });
    expect(cli).toMatchObject({ ready: true, command: process.execPath, args: [executable] });
  });

  it.each([
    ["no marker: an install that stopped half way", { marker: false, executable: true }],
    ["a marker but no executable: a cache pruned by hand", { marker: true, executable: false }],
  ])("installs again over %s; npm failing, it skips with the reason outside CI", async (_case, parts) => {
    offline(false);
    const { cacheRoot } = await cacheWith("opencode", parts);
    const cli = await installAgentCli("opencode", { cacheRoot });
    expect(cli).toMatchObject({ ready: false, name: "opencode" });
    expect(cli.ready === false && cli.reason).toMatch(/npm install opencode-ai@/);
    expect(console.warn).toHaveBeenCalledOnce();
    // A skip says how to get the CLIs, not only why they are missing.
    expect(String(vi.mocked(console.warn).mock.calls[0]?.[0])).toContain(
      "pnpm --filter @stowage/agent-clis run install-clis",
    );
  });

  it("installs with the machine's global npmrc (registry, proxy, cafile), which --prefix alone would skip", async () => {
    // A fake npm on PATH: `config get globalconfig` names an existing file; `install` records its
    // arguments and fails, so nothing is installed.
    const bin = join(root, `fake-npm-${caseNumber}`);
    const globalrc = join(bin, "npmrc");
    const recorded = join(bin, "install-args");
    await mkdir(bin, { recursive: true });
    await writeFile(globalrc, "cafile=/etc/ssl/certs/proxy.pem\n");
    await writeFile(
      join(bin, "npm"),
      `#!/bin/sh\nif [ "$1" = config ]; then echo ${globalrc}; exit 0; fi\necho "$@" > ${recorded}; exit 1\n`,
      { mode: 0o755 },
    );
    vi.stubEnv("PATH", bin);
    vi.stubEnv("CI", "");
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const { cacheRoot } = await cacheWith("opencode", { marker: false, executable: false });
    expect(await installAgentCli("opencode", { cacheRoot })).toMatchObject({ ready: false });
    expect(await readFile(recorded, "utf8")).toContain(`--globalconfig ${globalrc} --prefix`);
  });

  it("throws in CI when the CLI cannot be installed: the real clients must run there", async () => {
    offline(true);
    const { cacheRoot } = await cacheWith("opencode", { marker: false, executable: false });
    await expect(installAgentCli("opencode", { cacheRoot })).rejects.toThrow(/in CI/);
  });

  it("skips with the reason when the cache cannot be created (a file in the way)", async () => {
    offline(false);
    const blocker = join(root, "a-file");
    await writeFile(blocker, "");
    const cli = await installAgentCli("codex", { cacheRoot: join(blocker, "cache") });
    expect(cli).toMatchObject({ ready: false, name: "codex" });
    expect(cli.ready === false && cli.reason).toMatch(/could not create and lock/);
  });
});

describe("agentCliCacheRoot", () => {
  it("is STOWAGE_AGENT_CLIS_CACHE when set", () => {
    expect(agentCliCacheRoot({ STOWAGE_AGENT_CLIS_CACHE: "/ci/cache" })).toBe("/ci/cache");
  });

  it("does not follow HOME, which every agent run replaces", () => {
    vi.stubEnv("HOME", "/somewhere/else");
    const root = agentCliCacheRoot({});
    expect(root.endsWith("/.cache/stowage-agent-clis")).toBe(true);
    expect(root.startsWith("/somewhere/else")).toBe(false);
  });
});
