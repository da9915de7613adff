// Planted symbolic links: nothing the package does under a directory it was given may read or
// write through one (issue 15, item 5).
import { rmSync, symlinkSync } from "node:fs";
import { mkdir, readdir, readFile, rename, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import {
  createArtifactStore,
  createInternalUrlRouter,
  createSessionFiles,
  forkArtifacts,
  moveSession,
} from "@stowage/artifacts";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { CLAIMS_DIR_NAME } from "../src/ids/claims.js";
import { artifactsDirFor } from "../src/layout/session-dir.js";
import { copyTree } from "../src/session/copy-tree.js";
import { sessionFileIn } from "./helpers.js";

const base = await tempDirectory("stowage-artifacts-links-");
let count = 0;
const quiet = { warn: () => {} };

async function setup() {
  const dir = join(base, String(count++));
  const sessions = join(dir, "sessions");
  const outside = join(dir, "outside");
  await mkdir(sessions, { recursive: true });
  await mkdir(outside);
  await writeFile(join(outside, "0.bash.log"), "outside the session");
  await writeFile(join(outside, "0-Leak.md"), "outside the session");
  return { sessions, outside, sessionFile: sessionFileIn(sessions) };
}

async function outsideUnchanged(outside: string): Promise<void> {
  expect((await readdir(outside)).sort()).toEqual(["0-Leak.md", "0.bash.log"]);
  expect(await readFile(join(outside, "0.bash.log"), "utf8")).toBe("outside the session");
}

describe("a session's artifacts directory planted as a link", () => {
  it("every operation is FORBIDDEN (ARTIFACTS_DIR_IS_LINK) and nothing outside is read or written", async () => {
    const { outside, sessionFile } = await setup();
    await symlink(outside, artifactsDirFor(sessionFile));
    const store = createArtifactStore({ sessionFile, logger: quiet });
    const router = createInternalUrlRouter({ artifacts: store });
    const refused = async (promise: Promise<unknown>) =>
      expect((await expectStowageError(promise, "FORBIDDEN")).reason).toBe("ARTIFACTS_DIR_IS_LINK");
    await refused(store.saveArtifact("bash", "escaped?"));
    await refused(store.openArtifactWriter("bash"));
    await refused(store.allocateAgentOutput("Explore"));
    await refused(store.writeAgentOutput("1-x", "escaped?"));
    await refused(store.listArtifacts());
    await refused(store.listAgentOutputs());
    await refused(store.readArtifact("0"));
    await refused(store.readAgentOutput("0-Leak"));
    await refused(router.read("artifact://0"));
    await refused(router.read("agent://0-Leak"));
    await outsideUnchanged(outside);
  });

  it("a directory given as such may be a link: the caller chose it", async () => {
    const { outside } = await setup();
    const link = join(base, `given-${count++}`);
    await symlink(outside, link);
    const store = createArtifactStore({ dir: link, logger: quiet });
    expect((await store.readArtifact("0")).text).toBe("outside the session");
  });

  it("moveSession refuses to move it as the artifacts", async () => {
    const { outside, sessionFile } = await setup();
    await writeFile(sessionFile, "{}\n");
    await symlink(outside, artifactsDirFor(sessionFile));
    await expectStowageError(
      moveSession(sessionFile, join(base, `moved-${count++}`)),
      "CONFLICT",
      "NOT_A_DIRECTORY",
    );
    await outsideUnchanged(outside);
  });
});

describe("the claims directory swapped for a link after the first claim", () => {
  it("the next claim is FORBIDDEN (CLAIMS_NOT_A_DIRECTORY) and writes nothing outside", async () => {
    const { outside, sessionFile } = await setup();
    const store = createArtifactStore({ sessionFile, logger: quiet });
    expect(await store.saveArtifact("bash", "first")).toBe("0");
    const claims = join(store.dir, CLAIMS_DIR_NAME);
    await rename(claims, `${claims}-moved`);
    await symlink(outside, claims);
    await expectStowageError(store.saveArtifact("bash", "second"), "FORBIDDEN", "CLAIMS_NOT_A_DIRECTORY");
    await outsideUnchanged(outside);
  });
});

describe("copies (fork, move across file systems) never follow a link swapped in during the copy", () => {
  /** Copies a source holding `name` (made by `make`), swapping `name` for a link to `target` between the listing and the copy. */
  async function copyWithSwap(name: string, make: (from: string) => Promise<void>, target: string) {
    const from = join(base, `from-${count++}`);
    await mkdir(from);
    await make(from);
    const errors: string[] = [];
    const to = join(base, `to-${count++}`);
    await copyTree(from, to, {
      link: false,
      fsync: false,
      skip: (entry) => {
        // Between the listing and the copy of this entry: the attacker's swap.
        if (entry === name) swapForLink(join(from, name), target);
        return undefined;
      },
      onError: (error) => errors.push(`${error.code}:${error.reason}`),
    });
    return { copied: await readdir(to), errors };
  }

  it("a subdirectory swapped for a link after the listing is refused, not copied from outside", async () => {
    const { outside } = await setup();
    const result = await copyWithSwap(
      "sub",
      async (from) => {
        await mkdir(join(from, "sub"));
        await writeFile(join(from, "sub", "inside.txt"), "inside");
      },
      outside,
    );
    expect(result).toEqual({ copied: [], errors: ["FORBIDDEN:NOT_COPYABLE"] });
  });

  it("a file swapped for a link after the listing is refused when copied", async () => {
    const { outside } = await setup();
    const result = await copyWithSwap(
      "0.bash.log",
      (from) => writeFile(join(from, "0.bash.log"), "inside"),
      join(outside, "0.bash.log"),
    );
    expect(result).toEqual({ copied: [], errors: ["FORBIDDEN:NOT_COPYABLE"] });
  });

  it("forkArtifacts copies a planted link as a link, never what it points at", async () => {
    const { outside, sessionFile } = await setup();
    const store = createArtifactStore({ sessionFile, logger: quiet });
    await store.saveArtifact("bash", "mine");
    await symlink(join(outside, "0.bash.log"), join(store.dir, "7.bash.log"));
    const forked = join(base, `fork-${count++}`);
    const result = await forkArtifacts(store.dir, forked, { logger: quiet });
    expect(result.forked).toBe(true);
    const fork = createArtifactStore({ dir: forked, logger: quiet });
    await expectStowageError(fork.readArtifact("7"), "FORBIDDEN", "NOT_A_REGULAR_FILE");
    await outsideUnchanged(outside);
  });
});

/** Replaces `path` (a file or directory) with a link to `target`, at once: the copy's next step sees it. */
function swapForLink(path: string, target: string): void {
  rmSync(path, { recursive: true, force: true });
  symlinkSync(target, path);
}

describe("session files below a root (a server's <root>/<kind>/<id>)", () => {
  /** An outside tree holding a session with an artifact, as another tenant's would be. */
  async function outsideSession(dir: string) {
    const outside = join(dir, "outside", "alice");
    const stem = "2026-01-01T00-00-00-000Z_theirs";
    await mkdir(join(outside, stem), { recursive: true });
    await writeFile(join(outside, `${stem}.jsonl`), "");
    await writeFile(join(outside, stem, "0.bash.log"), "OUTSIDE SECRET");
    return { outside, stem };
  }

  it.each([
    ["the kind directory", ["user"], (outside: string) => dirname(outside)],
    ["the id directory", ["user", "bob"], (outside: string) => outside],
  ])(
    "a link at %s is refused (SYMLINK_REFUSED): nothing outside is listed, read or created",
    async (_where, linked, target) => {
      const dir = join(base, `root-${count++}`);
      const root = join(dir, "agent-sessions");
      const { outside } = await outsideSession(dir);
      await mkdir(join(root, ...linked.slice(0, -1)), { recursive: true });
      await symlink(target(outside), join(root, ...linked));
      const files = createSessionFiles({ dir: root, segments: ["user", "bob"], logger: quiet });
      await expectStowageError(files.list(), "FORBIDDEN", "SYMLINK_REFUSED");
      await expectStowageError(files.get("theirs"), "FORBIDDEN", "SYMLINK_REFUSED");
      await expectStowageError(files.create("planted"), "FORBIDDEN", "SYMLINK_REFUSED");
      expect((await readdir(outside)).sort()).toEqual([
        "2026-01-01T00-00-00-000Z_theirs",
        "2026-01-01T00-00-00-000Z_theirs.jsonl",
      ]);
    },
  );

  it("a link where a session's artifacts directory should be is refused (ARTIFACTS_DIR_IS_LINK)", async () => {
    const dir = join(base, `root-${count++}`);
    const root = join(dir, "agent-sessions");
    const { outside, stem } = await outsideSession(dir);
    const files = createSessionFiles({ dir: root, segments: ["user", "bob"], logger: quiet });
    const session = await files.create("mine", new Date("2026-01-01T00:00:00Z"));
    await symlink(join(outside, stem), join(root, "user", "bob", "2026-01-01T00-00-00-000Z_mine"));
    await expectStowageError(session.router.read("artifact://0"), "FORBIDDEN", "ARTIFACTS_DIR_IS_LINK");
    await expectStowageError(
      session.artifacts.saveArtifact("bash", "escaped?"),
      "FORBIDDEN",
      "ARTIFACTS_DIR_IS_LINK",
    );
    expect(await readdir(join(outside, stem))).toEqual(["0.bash.log"]);
  });

  it("without links, sessions and artifacts live at <root>/<segments>/ and the root itself may be a link", async () => {
    const dir = join(base, `root-${count++}`);
    await mkdir(join(dir, "real"), { recursive: true });
    await symlink(join(dir, "real"), join(dir, "agent-sessions"));
    const files = createSessionFiles({
      dir: join(dir, "agent-sessions"),
      segments: ["user", "bob"],
      logger: quiet,
    });
    expect(files.dir).toBe(join(dir, "agent-sessions", "user", "bob"));
    const session = await files.create("mine");
    await session.artifacts.saveArtifact("bash", "inside");
    expect((await files.get("mine")).sessionId).toBe("mine");
    expect((await session.router.read("artifact://0")).text).toBe("inside");
    expect(await readdir(join(dir, "real", "user", "bob"))).toHaveLength(2);
  });

  it.each([[["..", "x"]], [["a/b"]], [[""]], ["user"]])("refuses the segments %j", (segments) => {
    expect(() => createSessionFiles({ dir: base, segments: segments as never })).toThrow(/segments/);
  });
});
