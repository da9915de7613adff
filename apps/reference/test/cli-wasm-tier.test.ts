import { describe, expect, it } from "vitest";
import { runsOnce } from "../src/cli/wasm-tier.js";

// A one-off command compiles the embedded database's WebAssembly at the baseline tier only; the
// commands that serve until stopped keep V8's default, where optimized code pays for itself.
describe("which stowage commands run once", () => {
  it.each([
    [["serve"], false],
    [["demo", "--exit"], false],
    [["--debug", "demo"], false],
    [["mcp", "--user", "u", "--session", "s"], false],
    [["session", "stored", "--user", "u"], true],
    [["session", "restore", "--user", "u", "--request", "serve"], true],
    [["keys", "create", "--user", "mcp"], true],
    [["--help"], true],
    [[], true],
  ])("stowage %j: %s", (argv, once) => {
    expect(runsOnce(argv)).toBe(once);
  });
});
