import { readFile } from "node:fs/promises";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { openCodeEnv } from "../src/index.js";

// Without a catalogue file OpenCode builds its provider state from the whole models.dev catalogue
// bundled in its binary (~3.5 s of CPU a run); a missing file would only make every run slower.
describe("openCodeEnv", () => {
  it("gives OpenCode an empty models.dev catalogue that exists", async () => {
    const env = openCodeEnv(await tempDirectory("stowage-opencode-env-"));
    expect(env.OPENCODE_DISABLE_MODELS_FETCH).toBe("1");
    // Bun's optimizing compilers off: a run of seconds never earns back their background work.
    expect(env.BUN_JSC_useDFGJIT).toBe("0");
    expect(JSON.parse(await readFile(env.OPENCODE_MODELS_PATH as string, "utf8"))).toEqual({});
  });
});
