// upload_artifact against a workspace its agent controls: FIFOs, hard links, a directory swapped
// for a link between the check and the open, the file system's root; and the policy and quota.
import { execFileSync } from "node:child_process";
import { link, mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { startDirectorySwapper, tempDirectory } from "@stowage/test-support";
import { createUploadPolicy } from "@stowage/uploads";
import { afterEach, describe, expect, it } from "vitest";
import { createStowageMcpServer, errorFromMcp } from "../src/index.js";
import {
  ALICE,
  connectedFixture,
  connectInMemory,
  SESSION_ID,
  sessionFixture,
  stowageErrorOf,
} from "./session-fixture.js";

const base = await tempDirectory("stowage-mcp-upload-");
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function setUp(fixtureOptions = {}) {
  const fixture = await connectedFixture(base, closers, {}, fixtureOptions);
  const upload = (filePath: string) =>
    fixture.client.callTool({ name: "upload_artifact", arguments: { filePath } });
  const uploaded = async () => (await fixture.service.listUploads(ALICE, SESSION_ID)).map((u) => u.filename);
  return { ...fixture, upload, uploaded };
}

describe("upload_artifact in a hostile workspace", () => {
  it("refuses a FIFO at once, and the server keeps answering", async () => {
    const { client, workspace, upload } = await setUp();
    execFileSync("mkfifo", [join(workspace, "pipe.txt")]);
    // Opening a FIFO for reading waits for a writer: four such calls used to take libuv's whole pool.
    const calls = Array.from({ length: 5 }, () =>
      expectStowageError(stowageErrorOf(upload("pipe.txt")), "FORBIDDEN", "NOT_A_REGULAR_FILE"),
    );
    await Promise.all(calls);
    const read = await client.callTool({ name: "read_artifact", arguments: { id: 0 } });
    expect(read.isError).toBeFalsy();
  });

  it("refuses a hard link, which could be a host file's other name", async () => {
    const { workspace, upload, uploaded } = await setUp();
    const secret = join(base, `secret-${Math.random()}.txt`);
    await writeFile(secret, "SERVER SECRET\n");
    await link(secret, join(workspace, "linked.txt"));
    await expectStowageError(stowageErrorOf(upload("linked.txt")), "FORBIDDEN", "HARD_LINKED");
    expect(await uploaded()).toEqual([]);
  });

  it("never uploads the host file while the agent swaps a directory for a link and back", async () => {
    const { workspace, upload, service } = await setUp();
    const outside = join(base, `outside-${Math.random()}`);
    await mkdir(outside);
    await writeFile(join(outside, "notes.txt"), "HOST FILE\n");
    await mkdir(join(workspace, "sub"));
    await writeFile(join(workspace, "sub", "notes.txt"), "workspace notes\n");
    // On a worker thread, beside the calls: `sub` steps aside, a link to `outside` takes its name.
    const swapper = startDirectorySwapper({ directory: join(workspace, "sub"), outside });
    const outcomes: Record<string, number> = {};
    const hostSizes: number[] = [];
    let swaps = 0;
    try {
      const until = Date.now() + 5_000;
      for (let calls = 0; calls < 1_000 && Date.now() < until; calls++) {
        const result = await upload("sub/notes.txt");
        const outcome = result.isError ? String(errorFromMcp(result)?.reason ?? "refused") : "uploaded";
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
        if (!result.isError && (result.structuredContent as { size: number }).size === "HOST FILE\n".length) {
          hostSizes.push(calls);
        }
      }
    } finally {
      swaps = await swapper.stop();
      console.info(`upload_artifact under ${swaps} swaps:`, outcomes);
    }
    expect(hostSizes).toEqual([]);
    // Whatever got through is the workspace's file, never the host's.
    const stored = await service.listUploads(ALICE, SESSION_ID);
    for (const info of stored) expect(info.size).toBe("workspace notes\n".length);
    expect(outcomes.uploaded ?? 0).toBeGreaterThan(0);
    // It raced: the swapper ran, and some calls met the link (else the test proves nothing).
    expect(swaps).toBeGreaterThan(0);
    expect(outcomes.SYMLINK_REFUSED ?? 0).toBeGreaterThan(0);
  });

  it("refuses the file system's root as the workspace, also behind a link", async () => {
    const fixture = await sessionFixture(base);
    const uploads = fixture.options.uploads!;
    expect(() => createStowageMcpServer({ ...fixture.options, uploads: { ...uploads, root: "/" } })).toThrow(
      expect.objectContaining({ code: "INVALID_INPUT", reason: "INVALID_UPLOAD_ROOT" }),
    );
    expect(() =>
      createStowageMcpServer({ ...fixture.options, uploads: { ...uploads, root: "relative/dir" } }),
    ).toThrow(expect.objectContaining({ code: "INVALID_INPUT", reason: "INVALID_UPLOAD_ROOT" }));
    const toRoot = join(base, `to-root-${Math.random()}`);
    await symlink("/", toRoot);
    const { client, close } = await connectInMemory({
      ...fixture.options,
      uploads: { ...uploads, root: toRoot },
    });
    closers.push(close);
    await expectStowageError(
      stowageErrorOf(client.callTool({ name: "upload_artifact", arguments: { filePath: "etc/hostname" } })),
      "INVALID_INPUT",
      "INVALID_UPLOAD_ROOT",
    );
  });
});

describe("upload_artifact and the upload policy", () => {
  it("applies the file size limit and the session quota of the server", async () => {
    const { workspace, upload, uploaded } = await setUp({
      uploadPolicy: createUploadPolicy({ maxFileSizeBytes: 1024 * 1024, maxTotalSizeBytes: 1500 }),
    });
    await writeFile(join(workspace, "a.txt"), "a".repeat(1000));
    await writeFile(join(workspace, "b.txt"), "b".repeat(1000));
    await writeFile(join(workspace, "big.txt"), "c".repeat(2 * 1024 * 1024));
    expect((await upload("a.txt")).isError).toBeFalsy();
    await expectStowageError(stowageErrorOf(upload("b.txt")), "QUOTA_EXCEEDED", "SESSION_QUOTA_EXCEEDED");
    await expectStowageError(stowageErrorOf(upload("big.txt")), "TOO_LARGE", "FILE_TOO_LARGE");
    expect(await uploaded()).toEqual(["a.txt"]);
  });

  it("streams a file larger than any chunk and stores exactly its bytes", async () => {
    const { workspace, upload, service } = await setUp();
    const bytes = Buffer.alloc(3 * 1024 * 1024 + 17, 0x61);
    await writeFile(join(workspace, "trace.log"), bytes);
    const result = await upload("trace.log");
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ filename: "trace.log", size: bytes.byteLength });
    expect((await service.listUploads(ALICE, SESSION_ID)).map((u) => u.size)).toEqual([bytes.byteLength]);
  });
});
