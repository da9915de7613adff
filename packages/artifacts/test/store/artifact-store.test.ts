import { mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { CLAIMS_DIR_NAME } from "../../src/ids/claims.js";
import { artifactsDirFor } from "../../src/layout/session-dir.js";
import { createArtifactStore } from "../../src/store/artifact-store.js";
import { sessionFileIn } from "../helpers.js";

const base = await tempDirectory("stowage-artifacts-store-");
let count = 0;
const freshDir = () => join(base, `dir-${count++}`);

describe("artifact ids", () => {
  it("start at 0 in a missing directory and increase", async () => {
    const store = createArtifactStore({ sessionFile: sessionFileIn(base) });
    expect(await store.listArtifacts()).toEqual([]);
    expect(await store.saveArtifact("bash", "zero")).toBe("0");
    expect(await store.saveArtifact("python", "one")).toBe("1");
    expect(await store.saveArtifact("bash", new TextEncoder().encode("two"))).toBe("2");
    expect((await readdir(store.dir)).filter((name) => name !== CLAIMS_DIR_NAME).sort()).toEqual([
      "0.bash.log",
      "1.python.log",
      "2.bash.log",
    ]);
    expect(await readFile(join(store.dir, "1.python.log"), "utf8")).toBe("one");
  });

  it("continue after the highest id present on resume, whatever wrote it", async () => {
    const dir = freshDir();
    await mkdir(dir);
    await writeFile(join(dir, "4.bash.log"), "old");
    await writeFile(join(dir, "9.read.log.partial"), "interrupted");
    await writeFile(join(dir, "12-x.md"), "an agent output is not an artifact id");
    const store = createArtifactStore({ dir });
    expect(await store.saveArtifact("bash", "new")).toBe("10");
    // A new store (a resumed process) sees the claims too, even once files are gone.
    const resumed = createArtifactStore({ dir });
    expect(await resumed.saveArtifact("bash", "newer")).toBe("11");
    expect(await readFile(join(dir, "4.bash.log"), "utf8")).toBe("old");
  });

  it("count files with a dotted tool type written by other tools, which lookups find", async () => {
    const dir = freshDir();
    await mkdir(dir);
    await writeFile(join(dir, "9.mcp.server.log"), "from an MCP server\n");
    await writeFile(join(dir, "3.x.y.log.partial"), "still running");
    const store = createArtifactStore({ dir });
    expect(await store.saveArtifact("bash", "next")).toBe("10");
    expect(await store.readArtifact("9")).toMatchObject({ id: "9", toolType: "mcp.server", complete: true });
    expect((await store.listArtifacts()).map((entry) => [entry.id, entry.toolType, entry.complete])).toEqual([
      ["3", "x.y", false],
      ["9", "mcp.server", true],
      ["10", "bash", true],
    ]);
  });

  it("are unique when many are allocated at once in one process", async () => {
    const store = createArtifactStore({ dir: freshDir() });
    const ids = await Promise.all(
      Array.from({ length: 200 }, (_, i) => store.saveArtifact(`t${i % 3}`, `${i}`)),
    );
    expect(new Set(ids).size).toBe(200);
    expect(ids.map(Number).sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i));
  });

  it("are unique between two stores on the same directory (tool types differ)", async () => {
    const dir = freshDir();
    const a = createArtifactStore({ dir });
    const b = createArtifactStore({ dir });
    const ids = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        i % 2 ? a.saveArtifact("bash", `a${i}`) : b.saveArtifact("python", `b${i}`),
      ),
    );
    expect(new Set(ids).size).toBe(100);
    const entries = await a.listArtifacts();
    expect(entries).toHaveLength(100);
    expect(new Set(entries.map((entry) => entry.id)).size).toBe(100);
  });

  it("sanitize the tool type into the file name", async () => {
    const store = createArtifactStore({ dir: freshDir() });
    const writer = await store.openArtifactWriter("../../etc/passwd");
    expect(writer.toolType).toBe("etc_passwd");
    expect(writer.path).toBe(join(store.dir, "0.etc_passwd.log"));
    await writer.write([new TextEncoder().encode("x")]);
    await writer.publish();
    expect((await store.listArtifacts()).map((entry) => entry.fileName)).toEqual(["0.etc_passwd.log"]);
  });

  it("refuse a symbolic link planted where the claims directory goes", async () => {
    const dir = freshDir();
    const elsewhere = freshDir();
    await mkdir(dir);
    await mkdir(elsewhere);
    await symlink(elsewhere, join(dir, CLAIMS_DIR_NAME));
    await expectStowageError(
      createArtifactStore({ dir }).saveArtifact("bash", "x"),
      "FORBIDDEN",
      "CLAIMS_NOT_A_DIRECTORY",
    );
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it("fail with CONFLICT when the artifacts directory is a file", async () => {
    const dir = freshDir();
    await writeFile(dir, "not a directory");
    await expectStowageError(createArtifactStore({ dir }).saveArtifact("bash", "x"), "CONFLICT");
    await expectStowageError(createArtifactStore({ dir }).listArtifacts(), "CONFLICT", "NOT_A_DIRECTORY");
  });

  it("are not used up by a failed stream: the partial file is removed", async () => {
    const store = createArtifactStore({ dir: freshDir() });
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new Uint8Array(10));
        controller.error(new Error("tool died"));
      },
    });
    await expect(store.saveArtifact("bash", body)).rejects.toThrow(/tool died/);
    expect(await store.listArtifacts()).toEqual([]);
    expect(await store.saveArtifact("bash", "next")).toBe("1");
  });
});

describe("agent output ids", () => {
  it("are <index>-<requestedId>, sanitized, nested under a parent prefix", async () => {
    const store = createArtifactStore({ dir: freshDir() });
    const parent = await store.allocateAgentOutput("Parent");
    expect(parent.outputId).toBe("0-Parent");
    expect(parent.path).toBe(join(store.dir, "0-Parent.md"));
    expect((await store.allocateAgentOutput("../evil name")).outputId).toBe("1-evil_name");
    expect((await store.allocateAgentOutput("Child", { parentPrefix: "0-Parent" })).outputId).toBe(
      "0-Parent.0-Child",
    );
    expect((await store.allocateAgentOutput("Other", { parentPrefix: "0-Parent" })).outputId).toBe(
      "0-Parent.1-Other",
    );
    expect((await store.allocateAgentOutput("x.y", { parentPrefix: "0-Parent.0-Child" })).outputId).toBe(
      "0-Parent.0-Child.0-x_y",
    );
  });

  it("continue from the next index on resume", async () => {
    const dir = freshDir();
    await mkdir(dir);
    await writeFile(join(dir, "0-a.md"), "a");
    await writeFile(join(dir, "5-b.md"), "b");
    await writeFile(join(dir, "5-b.2-c.md"), "nested");
    await writeFile(join(dir, "7.bash.log"), "an artifact is not an agent index");
    const store = createArtifactStore({ dir });
    expect((await store.allocateAgentOutput("next")).outputId).toBe("6-next");
    expect((await store.allocateAgentOutput("child", { parentPrefix: "5-b" })).outputId).toBe("5-b.3-child");
    expect((await store.allocateAgentOutput("child", { parentPrefix: "0-a" })).outputId).toBe("0-a.0-child");
    const resumed = createArtifactStore({ dir });
    expect((await resumed.allocateAgentOutput("again")).outputId).toBe("7-again");
  });

  it("never reuse an index when allocated concurrently", async () => {
    const dir = freshDir();
    const stores = [createArtifactStore({ dir }), createArtifactStore({ dir })];
    const ids = await Promise.all(
      Array.from({ length: 60 }, (_, i) => stores[i % 2]!.allocateAgentOutput(i % 3 ? "same" : "other")),
    );
    const indexes = ids.map(({ outputId }) => Number(outputId.split("-")[0]));
    expect(new Set(indexes).size).toBe(60);
  });

  it("are written atomically and read back", async () => {
    const store = createArtifactStore({ dir: freshDir() });
    const { outputId } = await store.allocateAgentOutput("Explore");
    await store.writeAgentOutput(outputId, "# Findings\n");
    expect(await store.listAgentOutputs()).toEqual(["0-Explore"]);
    expect((await store.readAgentOutput(outputId)).text).toBe("# Findings\n");
    await store.writeAgentOutput(outputId, new TextEncoder().encode("# Revised\n"));
    expect((await store.readAgentOutput(outputId)).text).toBe("# Revised\n");
  });

  it("reject a hostile parent prefix, output id or body", async () => {
    const store = createArtifactStore({ dir: freshDir() });
    for (const parentPrefix of ["../x", "0-a/../b", "0-a.", ".0-a", "%2e%2e", "0-a\u0000", "/abs"]) {
      await expectStowageError(
        store.allocateAgentOutput("x", { parentPrefix }),
        "INVALID_INPUT",
        "INVALID_AGENT_OUTPUT_ID",
      );
    }
    const deep = Array.from({ length: 13 }, (_, i) => `${i}-${"n".repeat(12)}`).join(".");
    await expectStowageError(
      store.allocateAgentOutput("x", { parentPrefix: deep }),
      "INVALID_INPUT",
      "AGENT_OUTPUT_ID_TOO_LONG",
    );
    for (const id of ["../x", "0-a/../../etc/passwd", "x", "0-a.md", "/etc/passwd"]) {
      await expectStowageError(store.writeAgentOutput(id, "x"), "INVALID_INPUT");
    }
    await expectStowageError(store.writeAgentOutput("0-a", 42 as unknown as string), "INVALID_INPUT");
    expect(await store.listAgentOutputs()).toEqual([]);
  });
});

describe("lookups", () => {
  it("are by exact file name: artifact 1 and agent output 1-x never collide", async () => {
    const store = createArtifactStore({ dir: freshDir() });
    await store.saveArtifact("bash", "artifact zero");
    await store.saveArtifact("bash", "artifact one");
    await store.writeAgentOutput("1-x", "agent one");
    await store.writeAgentOutput("10-y", "agent ten");
    expect((await store.readArtifact("1")).text).toBe("artifact one");
    expect((await store.readAgentOutput("1-x")).text).toBe("agent one");
    await expectStowageError(store.readArtifact("10"), "NOT_FOUND", "ARTIFACT_NOT_FOUND");
    await expectStowageError(store.readAgentOutput("1-y"), "NOT_FOUND", "AGENT_OUTPUT_NOT_FOUND");
  });
});

describe("createArtifactStore options", () => {
  it.each([
    [{}, "no location"],
    [{ dir: "" }, "empty dir"],
    [{ dir: "a\u0000b" }, "NUL in dir"],
    [{ sessionFile: "/x/no-timestamp.jsonl" }, "bad session file"],
    [{ dir: "/x", sessionFile: "/x/1_a.jsonl" }, "both"],
    [{ dir: "/x", fsync: "yes" }, "fsync not boolean"],
  ])("rejects %j (%s)", async (options, _why) => {
    await expectStowageError(() => createArtifactStore(options as never), "INVALID_INPUT");
  });

  it("derives the directory from the session file", () => {
    const sessionFile = sessionFileIn(base);
    expect(createArtifactStore({ sessionFile }).dir).toBe(artifactsDirFor(sessionFile));
  });
});
