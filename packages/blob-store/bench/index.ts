// Session persistence cost: our prepare step over a whole session against the least work any
// implementation must do (parse, hash every image, serialize), measured in the same run.
import { createHash } from "node:crypto";
import { type BenchCase, runBenchmarks } from "@stowage/bench-kit";
import {
  type BlobStore,
  createBlobStore,
  prepareEntryForPersistence,
  resolveBlobRefs,
} from "@stowage/blob-store";
import { createMemoryObjectStore } from "@stowage/core";
import { syntheticSession } from "../test/synthetic-session.js";
import { dedupPutCases } from "./dedup-put-cases.js";
import { gcCases } from "./gc-cases.js";
import { rgw, rgwCases } from "./rgw-cases.js";

// 2,000 entries with 40 images of 100-500 KB of base64 each: about 12 MB of JSONL.
const session = syntheticSession({ entries: 2000, images: 40, imageBytes: [75_000, 375_000], seed: 11 });
const lines = session.map((entry) => JSON.stringify(entry));
const totalBytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
console.log(`synthetic session: ${lines.length} lines, ${(totalBytes / 1024 / 1024).toFixed(1)} MiB`);

type Block = { type?: string; data?: string; source?: { data?: string }; content?: unknown };

/** The baseline finds images where the fixture puts them; it does not search generally. */
function hashImages(blocks: unknown): void {
  if (!Array.isArray(blocks)) return;
  for (const block of blocks as Block[]) {
    const data = block.type === "image" ? (block.data ?? block.source?.data) : undefined;
    if (data) createHash("sha256").update(Buffer.from(data, "base64")).digest("hex");
    if (block.type === "tool_result") hashImages(block.content);
  }
}

let blobs: BlobStore;
let preparedLines: string[] = [];

const cases: BenchCase[] = [
  {
    name: "prepareEntryForPersistence over a 12 MB session (2,000 entries, 40 images) vs JSON.parse + sha256 of each image + JSON.stringify",
    target: { kind: "time", max: 1.5 },
    units: { count: totalBytes, label: "B" },
    rounds: 9,
    prepare() {
      // A fresh store each run, so every image is a new blob (the expensive path).
      blobs = createBlobStore({ store: createMemoryObjectStore() });
    },
    async ours() {
      const out: string[] = [];
      for (const line of lines)
        out.push(JSON.stringify(await prepareEntryForPersistence(JSON.parse(line), { blobs })));
      preparedLines = out;
    },
    async baseline() {
      for (const line of lines) {
        const entry = JSON.parse(line) as { message: { content: unknown } };
        hashImages(entry.message.content);
        JSON.stringify(entry);
      }
    },
  },
  {
    name: "resolveBlobRefs of the prepared session (40 images, verified, back to base64) vs JSON.parse + sha256 + base64 of each image",
    target: { kind: "time", max: 1.5 },
    units: { count: totalBytes, label: "B" },
    rounds: 9,
    async ours() {
      await resolveBlobRefs(
        preparedLines.map((line) => JSON.parse(line)),
        { blobs },
      );
    },
    async baseline() {
      const images = await Promise.all(
        [...(await blobs.list()).items].map(
          async (item) => (await blobs.objects.get(blobs.keyFor(item.hash)))!,
        ),
      );
      for (const line of preparedLines) JSON.parse(line);
      for (const bytes of images) {
        createHash("sha256").update(bytes).digest("hex");
        Buffer.from(bytes).toString("base64");
      }
    },
  },
  ...dedupPutCases(),
  ...gcCases(),
];
const s3 = rgw.ready ? rgwCases() : undefined;
if (s3) cases.push(...s3.cases);
if (!rgw.ready) console.log(`\nblob-store on RGW: ${rgw.reason}; run eval "$(tooling/rgw/start.sh)" first`);
await runBenchmarks(`@stowage/blob-store${s3 ? " (S3 cases on Ceph RGW)" : ""}`, cases);
await s3?.cleanup();
