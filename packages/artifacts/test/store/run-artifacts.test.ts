import { access, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { artifactsDirFor } from "../../src/layout/session-dir.js";
import { openRunArtifacts, TEMPORARY_ARTIFACTS_PREFIX } from "../../src/store/run-artifacts.js";
import { sessionFileIn } from "../helpers.js";

const base = await tempDirectory("stowage-run-artifacts-");
const quiet = { warn: () => {} };

describe("openRunArtifacts", () => {
  it("`await using` disposes a temporary run's directory at the end of the block", async () => {
    let dir: string;
    {
      await using run = await openRunArtifacts({ sessionFile: undefined, logger: quiet });
      dir = run.dir;
      await run.artifacts.writeAgentOutput(
        (await run.artifacts.allocateAgentOutput("Explore")).outputId,
        "x",
      );
      await expect(access(dir)).resolves.toBeUndefined();
    }
    await expect(access(dir)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("without a session file, writes subagent outputs to a private temporary directory that agent:// reads", async () => {
    const run = await openRunArtifacts({ tempRoot: base, logger: quiet });
    expect(run.temporary).toBe(true);
    expect(run.dir.startsWith(join(base, TEMPORARY_ARTIFACTS_PREFIX))).toBe(true);
    expect((await stat(run.dir)).mode & 0o777).toBe(0o700);

    const { outputId } = await run.artifacts.allocateAgentOutput("Explore");
    expect(outputId).toBe("0-Explore");
    await run.artifacts.writeAgentOutput(outputId, '{"findings":["a","b"]}');
    expect(await run.router.read("agent://0-Explore/findings/1")).toMatchObject({ text: "b" });
    const id = await run.artifacts.saveArtifact("bash", "tool output\n");
    expect((await run.router.read(`artifact://${id}`)).text).toBe("tool output\n");

    await run.dispose();
    await expect(access(run.dir)).rejects.toThrow();
  });

  it("takes sessionFile: null, as a run without a session file reports it, for no session file", async () => {
    const run = await openRunArtifacts({ sessionFile: null, tempRoot: base, logger: quiet });
    expect(run.temporary).toBe(true);
    expect(basename(run.dir).startsWith(TEMPORARY_ARTIFACTS_PREFIX)).toBe(true);
    await run.artifacts.writeAgentOutput("0-Plan", "# plan");
    expect((await run.router.read("agent://0-Plan")).text).toBe("# plan");
    await run.dispose();
    await expect(access(run.dir)).rejects.toThrow();
  });

  it("each run without a session file gets its own directory", async () => {
    const [a, b] = await Promise.all([
      openRunArtifacts({ tempRoot: base }),
      openRunArtifacts({ tempRoot: base }),
    ]);
    expect(a.dir).not.toBe(b.dir);
    await Promise.all([a.dispose(), b.dispose()]);
  });

  it("with a session file, uses the session's artifacts directory and never removes it", async () => {
    const sessionFile = sessionFileIn(base);
    const run = await openRunArtifacts({ sessionFile, logger: quiet });
    expect(run).toMatchObject({ temporary: false, dir: artifactsDirFor(sessionFile) });
    await run.artifacts.writeAgentOutput("0-Plan", "# plan");
    await run.dispose();
    expect((await run.router.read("agent://0-Plan")).text).toBe("# plan");
  });

  it("rejects a bad temp root or session file", async () => {
    await expectStowageError(openRunArtifacts({ tempRoot: "" }), "INVALID_INPUT");
    await expectStowageError(openRunArtifacts({ tempRoot: "a\u0000b" }), "INVALID_INPUT");
    await expectStowageError(openRunArtifacts({ sessionFile: "not-a-session.txt" }), "INVALID_INPUT");
    // An empty path is a mistake, not "no session file".
    await expectStowageError(openRunArtifacts({ sessionFile: "" }), "INVALID_INPUT");
  });
});
