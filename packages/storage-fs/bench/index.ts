// Benchmarks of the file-system backend (and of @stowage/blob-store over it), each case run by
// bench-kit's runComparisons: interleaved rounds, a new directory per run, the peers a user would
// pick instead installed from npm at bench time.
import { runComparisons, scratchSpace } from "@stowage/bench-kit";
import { blobCases } from "./blob-cases.js";
import { listingCases } from "./listing-cases.js";
import { peers } from "./peers.js";
import { putCases } from "./put-cases.js";
import { readCases } from "./read-cases.js";

const scratch = await scratchSpace("storage-fs");
console.log(peers.describe());
try {
  await runComparisons("@stowage/storage-fs (and @stowage/blob-store over it)", [
    ...listingCases(scratch),
    ...readCases(scratch),
    ...putCases(scratch),
    ...blobCases(scratch),
  ]);
} finally {
  await scratch.dispose();
}
