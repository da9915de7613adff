// Puts the same deterministic set of blobs as its sibling process, all at once, and prints the
// hashes it was given back.
import { createBlobStore } from "@stowage/blob-store";
import { createFsObjectStore } from "@stowage/storage-fs";

const [root, count] = process.argv.slice(2) as [string, string];
const blobs = createBlobStore({ store: createFsObjectStore({ root }), layout: "sharded" });
const bodies = Array.from({ length: Number(count) }, (_, i) => new Uint8Array(8192 + i).fill(i % 256));
const results = await Promise.all(bodies.map((body) => blobs.put(body)));
console.log(JSON.stringify(results.map((result) => result.hash)));
