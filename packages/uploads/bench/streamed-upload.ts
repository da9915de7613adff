import { once } from "node:events";
import { mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { peakRssDuring } from "@stowage/bench-kit";
import { sha256Hex } from "@stowage/core";
import { spawnChild } from "@stowage/test-support";
import { uploadFile } from "@stowage/uploads/agent";

const MIB = 1024 * 1024;
/** The case: a 50 MB file (the default per-file limit). */
const FILE_BYTES = 50 * MIB;
/** Issue 17's target for the agent's resident memory growth during that upload. */
export const STREAMED_UPLOAD_RSS_TARGET_BYTES = 32 * MIB;

/** Resident growth of one upload of a 50 MB file: ours (streamed) and a whole-file read. */
export interface StreamedUploadRss {
  /** The first 50 MB upload of the process (after a 1 KB one loaded fetch). */
  coldBytes: number;
  /** The second. */
  warmBytes: number;
  /** Reading the whole file, hashing it and PUTting it, as the uploader did before. */
  wholeFileBytes: number;
}

async function writeFile50(path: string): Promise<void> {
  const handle = await open(path, "w");
  const chunk = new Uint8Array(MIB).map((_, i) => i % 251);
  for (let written = 0; written < FILE_BYTES; written += MIB) await handle.write(chunk);
  await handle.close();
}

/**
 * Uploads a 50 MB file through `uploadFile` to a server in a child process (so that only the
 * uploader's memory is measured) and reports the resident growth: first upload (cold) and a
 * second (warm), and, for contrast, a whole-file read + hash + PUT as the uploader did before.
 * A 1 KB upload comes first, so that loading fetch is not counted as the file's cost.
 */
export async function measureStreamedUploadRss(): Promise<StreamedUploadRss> {
  const dir = await mkdtemp(join(tmpdir(), "stowage-uploads-bench-"));
  const filePath = join(dir, "video.mp4");
  await writeFile50(filePath);
  const server = spawnChild(new URL("./children/sink-server.ts", import.meta.url), []);
  try {
    const [line] = (await once(server.stdout!, "data")) as [Buffer];
    const apiBase = line.toString().trim();
    const upload = async () => {
      const result = await uploadFile({ apiBase, apiKey: "bench", sessionId: "bench", filePath });
      if (!result.success) throw new Error(`bench upload failed: ${result.error}`);
    };
    const wholeFile = async () => {
      const bytes = await readFile(filePath);
      sha256Hex(bytes);
      const response = await fetch(`${apiBase}put`, {
        method: "PUT",
        headers: { "content-type": "video/mp4", "content-length": String(bytes.byteLength) },
        body: bytes,
      });
      await response.arrayBuffer();
    };
    // Loading fetch (undici) and compiling the upload path is a one-time cost of any first request,
    // not of the file's size: a 1 KB upload takes it first.
    const small = join(dir, "small.mp4");
    await writeFile(small, new Uint8Array(1024));
    const warmup = await uploadFile({ apiBase, apiKey: "bench", sessionId: "bench", filePath: small });
    if (!warmup.success) throw new Error(`bench upload failed: ${warmup.error}`);
    const coldBytes = await peakRssDuring(upload);
    const warmBytes = await peakRssDuring(upload);
    const wholeFileBytes = await peakRssDuring(wholeFile);
    return { coldBytes, warmBytes, wholeFileBytes };
  } finally {
    server.kill();
    await rm(dir, { recursive: true, force: true });
  }
}
