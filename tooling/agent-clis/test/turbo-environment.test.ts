import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";

// The real-CLI suites install and reach servers from inside `turbo run test`: turbo must hand them
// the machine's TLS and proxy settings, and must never replay a test run from its cache (a run that
// skipped because a CLI was missing would be replayed as a pass after the CLI is installed).
const turbo = JSON.parse(await readFile(new URL("../../../turbo.json", import.meta.url), "utf8")) as {
  globalPassThroughEnv: string[];
  tasks: { test: { cache?: boolean; env: string[] } };
};

describe("turbo's test task", () => {
  it("is never cached: its outcome depends on the machine (installed CLIs, services)", () => {
    expect(turbo.tasks.test.cache).toBe(false);
  });

  it.each([
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "HTTPS_PROXY",
    "https_proxy",
    "NO_PROXY",
    "HOME",
    "XDG_CACHE_HOME",
  ])("passes %s through to every task", (name) => {
    expect(turbo.globalPassThroughEnv).toContain(name);
  });

  it.each(["CI", "DATABASE_URL", "S3_ENDPOINT", "STOWAGE_AGENT_CLIS_CACHE"])("gives the tests %s", (name) => {
    expect(turbo.tasks.test.env).toContain(name);
  });
});
