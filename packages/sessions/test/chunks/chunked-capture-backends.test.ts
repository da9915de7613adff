// Captures kept as chunks in a blob store on each backend a deployment uses for blobs: the fs
// store and S3 (Ceph RGW; PostgreSQL's object store runs the same BlobStore contract). A capture
// and its follow-up restore byte for byte from there, and the follow-up stores only what is new.
import { createHash, randomUUID } from "node:crypto";
import { mkdir, readFile, realpath } from "node:fs/promises";
import { join } from "node:path";
import { createBlobStore } from "@stowage/blob-store";
import type { ObjectStore } from "@stowage/core";
import { createFsObjectStore } from "@stowage/storage-fs";
import { createS3Client, createS3ObjectStore } from "@stowage/storage-s3";
import { realTranscripts, s3ClientOptions, s3TestEnv, tempDirectory } from "@stowage/test-support";
import { beforeAll, describe, expect, it } from "vitest";
import { captureSession } from "../../src/archive/capture-session.js";
import { restoreSession } from "../../src/archive/restore-session.js";
import { writeSessionTree } from "../../src/testing/write-session-tree.js";
import { transcriptWithScreenshots } from "./screenshot-transcript.js";

const base = await tempDirectory("stowage-chunked-backends-");
const sessionId = "624a4a58-b34c-462d-a70d-13421c8125a8";
const sha256 = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");
const s3 = s3TestEnv("captures kept as chunks");
// Skipped where the real transcript is absent (a clone without shared/ beside it); realTranscripts
// prints why, and fails in CI.
const real = realTranscripts("captures kept as chunks (a real Claude Code transcript)");

const backends: { name: string; skip?: string; objects: () => ObjectStore }[] = [
  { name: "fs", objects: () => createFsObjectStore({ root: join(base, `blobs-${randomUUID()}`) }) },
  {
    name: "S3 (Ceph RGW)",
    ...(s3.ready ? {} : { skip: s3.reason }),
    objects: () =>
      createS3ObjectStore({
        client: createS3Client(s3ClientOptions(s3)),
        bucket: s3.values.S3_BUCKET!,
        prefix: `test/chunked-captures/${randomUUID()}/`,
      }),
  },
];

let cwd: string;

beforeAll(async () => {
  await mkdir(join(base, "work"), { recursive: true });
  cwd = await realpath(join(base, "work"));
});

for (const backend of backends) {
  describe.skipIf(!real.present || backend.skip !== undefined)(
    `captures kept as chunks on ${backend.name}`,
    () => {
      it("a capture and its follow-up restore byte for byte; the follow-up stores only what is new", async () => {
        const blobs = createBlobStore({ store: backend.objects() });
        const configDir = join(base, `source-${randomUUID()}`);
        const first = transcriptWithScreenshots({ lines: 180, every: 12, distinct: 4 });
        const grown = transcriptWithScreenshots({ lines: 222, every: 12, distinct: 4 });
        const capture = async (text: string) => {
          await writeSessionTree({
            configDir,
            cwd,
            sessionId,
            files: new Map([[`${sessionId}.jsonl`, text]]),
          });
          return captureSession({ configDir, cwd, sessionId, blobs });
        };
        const one = await capture(first);
        const two = await capture(grown);
        expect(two.storedBytes).toBeLessThan(one.storedBytes / 3);
        for (const [captured, text] of [
          [one, first],
          [two, grown],
        ] as const) {
          const restored = await restoreSession(captured, {
            configDir: join(base, `target-${randomUUID()}`),
            cwd,
            blobs,
          });
          expect(sha256(await readFile(join(restored.projectDir!, `${sessionId}.jsonl`)))).toBe(sha256(text));
        }
      });
    },
  );
}
