import { execFileSync } from "node:child_process";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { createArtifactStore } from "../../src/store/artifact-store.js";
import { createInternalUrlRouter } from "../../src/urls/router.js";
import { sessionFileIn } from "../helpers.js";

const base = await tempDirectory("stowage-artifacts-router-");
const secret = join(base, "secret.txt");
await writeFile(secret, "TOP SECRET\n");

async function session() {
  const store = createArtifactStore({ sessionFile: sessionFileIn(base) });
  await store.saveArtifact("bash", "zero\n");
  await store.saveArtifact("bash", Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join("\n"));
  await store.writeAgentOutput("0-Explore", "# Notes\nplain markdown\n");
  await store.writeAgentOutput(
    "1-Report",
    JSON.stringify({ findings: [{ file: "a.ts", line: 3 }, null], "odd key": "value", summary: "done" }),
  );
  return { store, router: createInternalUrlRouter({ artifacts: store }) };
}

describe("artifact://", () => {
  it("returns the raw text/plain content", async () => {
    const { router } = await session();
    expect(await router.read("artifact://0")).toEqual({
      url: "artifact://0",
      scheme: "artifact",
      id: "0",
      contentType: "text/plain",
      text: "zero\n",
      complete: true,
    });
  });

  it("pages by lines", async () => {
    const { router } = await session();
    const page = await router.read("artifact://1", { offset: 10, limit: 3 });
    expect(page.text).toBe("line 10\nline 11\nline 12\n");
    expect(page.lines).toEqual({ first: 10, last: 12, hasMore: true });
    const last = await router.read("artifact://1", { offset: 99 });
    expect(last.text).toBe("line 99\nline 100");
    expect(last.lines).toEqual({ first: 99, last: 100, hasMore: false, totalLines: 100 });
  });

  it("lists the available ids when the id is missing", async () => {
    const { router } = await session();
    const err = await expectStowageError(router.read("artifact://7"), "NOT_FOUND", "ARTIFACT_NOT_FOUND");
    expect(err.details?.available).toEqual(["0", "1"]);
  });

  it("says so when the session has no artifacts directory", async () => {
    const router = createInternalUrlRouter({
      artifacts: createArtifactStore({ sessionFile: sessionFileIn(base) }),
    });
    const err = await expectStowageError(router.read("artifact://0"), "NOT_FOUND", "NO_ARTIFACTS_DIR");
    // The design document fixes these two texts: the model reads them.
    expect(err.message).toBe("No artifacts directory found");
    await expectStowageError(router.read("agent://0-x"), "NOT_FOUND", "NO_ARTIFACTS_DIR");
  });

  it("refuses a read over maxBytes, but pages through it", async () => {
    const store = createArtifactStore({ dir: join(base, "big") });
    const text = Array.from({ length: 200_000 }, (_, i) => `row ${i}`).join("\n");
    const id = await store.saveArtifact("bash", text);
    const router = createInternalUrlRouter({ artifacts: store });
    await expectStowageError(
      router.read(`artifact://${id}`, { maxBytes: 1024 * 1024 }),
      "TOO_LARGE",
      "READ_TOO_LARGE",
    );
    const page = await router.read(`artifact://${id}`, { offset: 150_001, limit: 2, maxBytes: 1024 * 1024 });
    expect(page.text).toBe("row 150000\nrow 150001\n");
  });
});

describe("agent://", () => {
  it("returns the markdown of <id>.md", async () => {
    const { router } = await session();
    expect(await router.read("agent://0-Explore")).toMatchObject({
      scheme: "agent",
      id: "0-Explore",
      contentType: "text/markdown",
      text: "# Notes\nplain markdown\n",
      complete: true,
    });
    expect((await router.read("agent://0-Explore", { offset: 2, limit: 1 })).text).toBe("plain markdown\n");
  });

  it("extracts by JSON path and by query", async () => {
    const { router } = await session();
    expect(await router.read("agent://1-Report/findings/0")).toMatchObject({
      contentType: "application/json",
      text: JSON.stringify({ file: "a.ts", line: 3 }, null, 2),
    });
    expect((await router.read("agent://1-Report?q=.findings[0].line")).text).toBe("3");
    expect(await router.read('agent://1-Report?q=.["odd key"]')).toMatchObject({
      contentType: "text/plain",
      text: "value",
    });
    expect((await router.read("agent://1-Report/odd%20key")).text).toBe("value");
    expect((await router.read("agent://1-Report?q=.")).text).toContain('"summary": "done"');
  });

  it("tells a missing path from a JSON null", async () => {
    const { router } = await session();
    expect((await router.read("agent://1-Report/findings/1")).text).toBe("null");
    const err = await expectStowageError(
      router.read("agent://1-Report/findings/2"),
      "NOT_FOUND",
      "JSON_PATH_NOT_FOUND",
    );
    expect(err.details).toMatchObject({ id: "1-Report", path: "/findings/2", stoppedAt: "/findings" });
    await expectStowageError(router.read("agent://1-Report?q=.nope"), "NOT_FOUND", "JSON_PATH_NOT_FOUND");
  });

  it("needs JSON for extraction and refuses paging with it", async () => {
    const { router } = await session();
    await expectStowageError(router.read("agent://0-Explore/a"), "INVALID_INPUT", "NOT_JSON");
    await expectStowageError(
      router.read("agent://1-Report/findings", { offset: 1 }),
      "INVALID_INPUT",
      "PAGING_WITH_EXTRACTION",
    );
    await expectStowageError(
      router.read("agent://1-Report?q=.summary", { limit: 1 }),
      "INVALID_INPUT",
      "PAGING_WITH_EXTRACTION",
    );
    await expectStowageError(router.read("agent://1-Report/a?q=.a"), "INVALID_INPUT", "PATH_AND_QUERY");
    await expectStowageError(router.read("agent://1-Report?q=oops"), "INVALID_INPUT", "INVALID_QUERY");
  });

  it("reports Not found with the available ids", async () => {
    const { router } = await session();
    const err = await expectStowageError(
      router.read("agent://2-Missing"),
      "NOT_FOUND",
      "AGENT_OUTPUT_NOT_FOUND",
    );
    expect(err.message).toBe("Not found: 2-Missing. Available: 0-Explore, 1-Report");
  });
});

describe("the router stays inside the session directory", () => {
  it("refuses symbolic links planted in it, even to readable files", async () => {
    const { store, router } = await session();
    await symlink(secret, join(store.dir, "5.bash.log"));
    await symlink(secret, join(store.dir, "0-Leak.md"));
    await symlink(base, join(store.dir, "6.bash.log"));
    await expectStowageError(router.read("artifact://5"), "FORBIDDEN", "NOT_A_REGULAR_FILE");
    await expectStowageError(router.read("agent://0-Leak"), "FORBIDDEN", "NOT_A_REGULAR_FILE");
    await expectStowageError(router.read("artifact://6"), "FORBIDDEN", "NOT_A_REGULAR_FILE");
  });

  it("refuses a FIFO or a directory without hanging", async () => {
    const { store, router } = await session();
    execFileSync("mkfifo", [join(store.dir, "8.bash.log")]);
    await mkdir(join(store.dir, "9.bash.log"));
    await expectStowageError(router.read("artifact://8"), "FORBIDDEN", "NOT_A_REGULAR_FILE");
    await expectStowageError(router.read("artifact://9"), "FORBIDDEN", "NOT_A_REGULAR_FILE");
  });

  it("rejects hostile ids before touching the disk", async () => {
    const { router } = await session();
    for (const url of [
      "artifact://../x",
      "artifact://1/../../etc",
      "artifact://%2e%2e",
      "artifact://\u0000",
      "artifact:///etc/passwd",
      "artifact://99999999999999999999",
      "artifact://-1",
      `artifact://${secret}`,
      "agent://../secret",
      "agent://%2e%2e/secret",
      "agent://0-x%00",
      `agent://${secret}`,
    ]) {
      const err = await expectStowageError(router.read(url), "INVALID_INPUT");
      expect(err.message).not.toContain("TOP SECRET");
    }
  });

  it("treats path segments as JSON keys, never as file paths", async () => {
    const { router } = await session();
    const err = await expectStowageError(
      router.read("agent://1-Report/../../secret.txt"),
      "NOT_FOUND",
      "JSON_PATH_NOT_FOUND",
    );
    expect(err.message).not.toContain("TOP SECRET");
  });

  it("recognizes its schemes", async () => {
    const { router } = await session();
    expect(router.canHandle("artifact://0")).toBe(true);
    expect(router.canHandle("agent://x")).toBe(true);
    expect(router.canHandle("https://example.com")).toBe(false);
    expect(router.canHandle(7)).toBe(false);
  });

  it.each([undefined, {}, { artifacts: {} }, { artifacts: "dir" }])(
    "refuses to build without an ArtifactStore: %j",
    async (options) => {
      await expectStowageError(() => createInternalUrlRouter(options as never), "INVALID_INPUT");
    },
  );
});
