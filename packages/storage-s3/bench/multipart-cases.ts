// A large archive put as a stream of unknown length, against what a user would pick instead:
// @aws-sdk/lib-storage's Upload with its default queue of 4 parts, on the same server.
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import type { S3Client } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import type { BenchCase } from "@stowage/bench-kit";
import { createS3ObjectStore } from "@stowage/storage-s3";
import { DEFAULT_PART_SIZE_BYTES } from "../src/s3-options.js";

const MIB = 1024 * 1024;
/**
 * 256 MiB is the case; the default is 64 MiB because RGW frees a deleted object's space
 * only at its garbage collection (hours later), and the test cluster keeps 4 GiB in memory: each
 * run's upload stays there. `STOWAGE_BENCH_ARCHIVE_MIB=256` runs the full case.
 */
const ARCHIVE_BYTES = Number(process.env.STOWAGE_BENCH_ARCHIVE_MIB ?? 64) * MIB;
const CHUNK_BYTES = MIB;

export function multipartCases(
  client: S3Client,
  bucket: string,
  prefix: string,
  cleanup: () => Promise<void>,
  partsInFlight?: number,
) {
  // 1 MiB chunks of random bytes (an archive does not compress), reused across runs.
  const chunk = new Uint8Array(randomBytes(CHUNK_BYTES));
  const chunks = ARCHIVE_BYTES / CHUNK_BYTES;
  const webStream = () => {
    let sent = 0;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ === chunks) controller.close();
        else controller.enqueue(chunk);
      },
    });
  };
  const nodeStream = () =>
    Readable.from(
      (function* () {
        for (let i = 0; i < chunks; i++) yield chunk;
      })(),
    );
  const store = createS3ObjectStore({
    client,
    bucket,
    prefix: `${prefix}store/`,
    ...(partsInFlight ? { partsInFlight } : {}),
  });
  let run = 0;
  const peerUpload = (key: string) =>
    new Upload({
      client,
      params: { Bucket: bucket, Key: `${prefix}peer/${key}`, Body: nodeStream() },
      queueSize: 4,
      partSize: DEFAULT_PART_SIZE_BYTES,
    }).done();

  const cases: BenchCase[] = [
    {
      name: `put of a ${ARCHIVE_BYTES / MIB} MiB stream (multipart, ${partsInFlight ?? 4} parts in flight) vs lib-storage Upload (queueSize 4)`,
      target: { kind: "speed", min: 1.0 },
      units: { count: ARCHIVE_BYTES, label: "B" },
      // Few runs and no warmup: every upload stays in the cluster's memory until its GC.
      rounds: 3,
      warmup: false,
      prepare: cleanup,
      ours: () => store.put(`archives/a-${run++}.tar`, webStream()),
      baseline: () => peerUpload(`archives/a-${run++}.tar`),
    },
  ];
  return cases;
}
