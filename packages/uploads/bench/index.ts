// Benchmarks of @stowage/uploads. First what needs no server: the agent's streamed upload of a
// 50 MB file (resident memory, measured first, in a fresh process) and the memory ledger's
// reservations. Then the upload path on a real S3 (Ceph RGW from tooling/rgw/start.sh) when it is
// configured, each case against the raw SDK operation doing the same work (or the same check at
// another size), measured in the same run. The SDK and storage-s3 are devDependencies: the
// package itself never loads them.
import { runBenchmarks } from "@stowage/bench-kit";
import { ledgerThroughputCase } from "./ledger-throughput.js";
import { rgw, rgwCases } from "./rgw-cases.js";
import { measureStreamedUploadRss, STREAMED_UPLOAD_RSS_TARGET_BYTES } from "./streamed-upload.js";

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

const rss = await measureStreamedUploadRss();
const rssMet =
  rss.warmBytes < STREAMED_UPLOAD_RSS_TARGET_BYTES && rss.coldBytes < STREAMED_UPLOAD_RSS_TARGET_BYTES;
console.log(
  `\nagent upload of a 50 MB file, resident memory growth (streamed from disk, hashed and sent): ` +
    `${mb(rss.coldBytes)} first upload, ${mb(rss.warmBytes)} second; a whole-file read + hash + PUT: ` +
    `${mb(rss.wholeFileBytes)}. Target < ${mb(STREAMED_UPLOAD_RSS_TARGET_BYTES)}: ${rssMet ? "met" : "MISSED"}`,
);
if (!rssMet) process.exitCode = 1;

const cases = [ledgerThroughputCase()];
if (rgw.ready) cases.push(...(await rgwCases()));
else console.log(`\nuploads on RGW: ${rgw.reason}; run eval "$(tooling/rgw/start.sh)" first`);
await runBenchmarks(`@stowage/uploads${rgw.ready ? " (S3 cases on Ceph RGW)" : ""}`, cases);
