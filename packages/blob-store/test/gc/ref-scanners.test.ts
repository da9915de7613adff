import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { brotliCompressSync, createBrotliDecompress, gzipSync } from "node:zlib";
import { createMemoryObjectStore } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { createBlobStore } from "../../src/blob-store.js";
import { collectGarbage } from "../../src/gc/collect-garbage.js";
import { scanFilesForBlobRefs } from "../../src/gc/file-refs.js";
import { scanObjectStoreForBlobRefs } from "../../src/gc/object-store-refs.js";
import { scanBytesForBlobRefs } from "../../src/gc/ref-scanner.js";

const dir = await tempDirectory("stowage-ref-scan-");
const hash = (n: number) => n.toString(16).padStart(64, "0");
const ref = (n: number) => `blob:sha256:${hash(n)}`;
const bytes = (text: string) => new TextEncoder().encode(text);

async function collect(source: AsyncIterable<string>): Promise<string[]> {
  const found = new Set<string>();
  for await (const value of source) found.add(value);
  return [...found].sort();
}

function chunks(parts: readonly string[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(bytes(part));
      controller.close();
    },
  });
}

describe("scanBytesForBlobRefs", () => {
  it("finds refs in bytes, in streams and across chunk boundaries", async () => {
    expect(await collect(scanBytesForBlobRefs(bytes(`x ${ref(1)} y ${ref(2)}`)))).toEqual([hash(1), hash(2)]);
    const cut = ref(3);
    expect(await collect(scanBytesForBlobRefs(chunks(["…", cut.slice(0, 20), cut.slice(20), "…"])))).toEqual([
      hash(3),
    ]);
    const nodeStream = Readable.from([
      Buffer.from(ref(4).slice(0, 70)),
      Buffer.from(`${ref(4).slice(70)}\n`),
    ]);
    expect(await collect(scanBytesForBlobRefs(nodeStream))).toEqual([hash(4)]);
  });

  it("throws what the source throws instead of ending with the refs read so far", async () => {
    const failing = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes(ref(5)));
        controller.error(new Error("connection reset"));
      },
    });
    await expect(collect(scanBytesForBlobRefs(failing))).rejects.toThrow();
  });

  it("refuses what is not bytes", async () => {
    for (const source of ["text", 42, null, [bytes("x")]]) {
      await expectStowageError(collect(scanBytesForBlobRefs(source as never)), "INVALID_INPUT");
    }
  });
});

describe("scanFilesForBlobRefs", () => {
  // The places the reference app writes refs under its data directory.
  const data = join(dir, "data");
  const sessions = join(data, "sessions");
  const session = join(sessions, "2026-01-01T10-00-00-000Z_s1");
  const threads = join(data, "jobs", "job-1", "threads", "main");

  it("finds refs in session files, tool-output artifacts, agent outputs, thread logs and posted items", async () => {
    await mkdir(join(threads, "logs"), { recursive: true });
    await mkdir(join(session, ".claims"), { recursive: true });
    await writeFile(`${session}.jsonl`, `{"data":"${ref(1)}"}\n`);
    await writeFile(join(session, "0.bash.log"), `$ cat screenshot.json\n{"image":"${ref(2)}"}\n`);
    await writeFile(join(session, "9.mcp.server.log.partial"), `still running ${ref(3)}`);
    await writeFile(join(session, "0-Explore.md"), `# Findings\n\n![shot](${ref(4)})\n`);
    await writeFile(join(session, ".claims", "artifact.0"), "");
    await writeFile(join(threads, "logs", "thread.log"), `{"item":{"data":"${ref(5)}"}}\n`);
    await writeFile(join(threads, "posted.jsonl"), gzipSync(`{"data":"${ref(6)}"}\n`));
    expect(await collect(scanFilesForBlobRefs([sessions, join(data, "jobs")]))).toEqual(
      [1, 2, 3, 4, 5, 6].map(hash),
    );
    // `include` narrows what is read under a directory.
    expect(
      await collect(scanFilesForBlobRefs(sessions, { include: (name) => name.endsWith(".md") })),
    ).toEqual([hash(4)]);
  });

  it("follows a link to a file, and refuses a link to a directory rather than skip it", async () => {
    const root = join(dir, "links");
    await mkdir(join(root, "elsewhere"), { recursive: true });
    await writeFile(join(root, "elsewhere", "a.jsonl"), ref(7));
    await mkdir(join(root, "scanned"));
    await symlink(join(root, "elsewhere", "a.jsonl"), join(root, "scanned", "link.jsonl"));
    expect(await collect(scanFilesForBlobRefs(join(root, "scanned")))).toEqual([hash(7)]);
    await symlink(join(root, "elsewhere"), join(root, "scanned", "dir-link"));
    const error = await expectStowageError(
      collect(scanFilesForBlobRefs(join(root, "scanned"))),
      "UNAVAILABLE",
    );
    expect(error.reason).toBe("ROOTS_UNREADABLE");
  });

  it("a missing path is NOT_FOUND unless missing paths are allowed", async () => {
    await expectStowageError(collect(scanFilesForBlobRefs(join(dir, "missing"))), "NOT_FOUND");
    expect(await collect(scanFilesForBlobRefs(join(dir, "missing"), { allowMissing: true }))).toEqual([]);
  });

  it("refuses bad paths and a bad include before reading", async () => {
    for (const paths of ["", "a\u0000b", [42]]) {
      await expectStowageError(collect(scanFilesForBlobRefs(paths as never)), "INVALID_INPUT");
    }
    await expectStowageError(
      collect(scanFilesForBlobRefs(dir, { include: "*.md" as never })),
      "INVALID_INPUT",
    );
  });
});

describe("scanObjectStoreForBlobRefs", () => {
  it("streams each object under a prefix", async () => {
    const uploads = createMemoryObjectStore();
    await uploads.put("sessions/user/u1/s1/artifacts/report.json", bytes(`{"image":"${ref(8)}"}`));
    await uploads.put("sessions/user/u1/s1/artifacts/notes.md", bytes("no refs here"));
    await uploads.put("other/file.json", bytes(ref(9)));
    expect(await collect(scanObjectStoreForBlobRefs(uploads, { prefix: "sessions/" }))).toEqual([hash(8)]);
    expect(
      await collect(scanObjectStoreForBlobRefs(uploads, { include: (key) => key.startsWith("o") })),
    ).toEqual([hash(9)]);
    await expectStowageError(collect(scanObjectStoreForBlobRefs({} as never)), "INVALID_INPUT");
  });
});

describe("roots from every place refs live", () => {
  it("garbage collection with a grace of 0 keeps every blob referenced from any of them", async () => {
    const blobs = createBlobStore({ store: createMemoryObjectStore(), layout: "sharded" });
    const put = async (text: string) => (await blobs.put(bytes(text))).ref;
    const inArtifact = await put("artifact");
    const inAgentOutput = await put("agent output");
    const inSessionBlob = await put("session blob");
    const inUpload = await put("upload");
    const inContentRegistry = await put("content ref");
    const orphan = await put("referenced by nothing");
    const root = join(dir, "app");
    const artifactsDir = join(root, "sessions", "2026-01-01T10-00-00-000Z_s2");
    await mkdir(artifactsDir, { recursive: true });
    await writeFile(join(artifactsDir, "0.bash.log"), inArtifact);
    await writeFile(join(artifactsDir, "0-Explore.md"), inAgentOutput);
    // A stored session blob is compressed: the app decompresses it and hands the stream over.
    const storedSessions = [brotliCompressSync(`{"message":{"content":[{"data":"${inSessionBlob}"}]}}\n`)];
    const uploads = createMemoryObjectStore();
    await uploads.put("sessions/user/u1/s2/artifacts/out.json", bytes(inUpload));
    await sleep(5);

    const report = await collectGarbage({
      blobs,
      graceMs: 0,
      timestampSlackMs: 0,
      roots: [
        { name: "session files and artifacts", refs: () => scanFilesForBlobRefs(join(root, "sessions")) },
        {
          name: "stored session blobs",
          refs: async function* () {
            for (const blob of storedSessions) {
              yield* scanBytesForBlobRefs(Readable.from([blob]).pipe(createBrotliDecompress()));
            }
          },
        },
        { name: "uploads", refs: () => scanObjectStoreForBlobRefs(uploads, { prefix: "sessions/" }) },
        { name: "content refs", refs: () => [inContentRegistry] },
      ],
    });
    expect(report).toMatchObject({ referenced: 5, deleted: 1 });
    for (const kept of [inArtifact, inAgentOutput, inSessionBlob, inUpload, inContentRegistry]) {
      expect(await blobs.has(kept)).toBe(true);
    }
    expect(await blobs.has(orphan)).toBe(false);
  });
});
