// A session writer in its own process: puts one of many images in turn, then writes the session
// file so that it references only that image (the line is written only once `put` returned, well
// within the grace period: the writers' rule of the garbage-collection protocol), then reads the
// image back. An image comes round again only after the grace period, so the collector in the
// other process keeps deleting images the writer is about to store again. Runs for the given time
// and until it made the given number of writes (a loaded machine writes slower), at most the
// given hard limit, and prints how many writes it made, how many referenced images it found missing, and how many
// lines came too late for the protocol's promise.
import { rename, writeFile } from "node:fs/promises";
import { createBlobStore } from "@stowage/blob-store";
import { createFsObjectStore } from "@stowage/storage-fs";

const [root, sessionFile, durationMs, graceMs, minWrites, maxDurationMs] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const blobs = createBlobStore({ store: createFsObjectStore({ root, fsync: false }), layout: "sharded" });
const images = Array.from({ length: 64 }, (_, i) => new Uint8Array(2048).fill(i));
let writes = 0;
let missing = 0;
// Writes whose line came later than the grace period after the put began (a stalled machine):
// outside the protocol's promise, so not counted as missing.
let late = 0;
const until = Date.now() + Number(durationMs);
const hardStop = Date.now() + Number(maxDurationMs);
while ((Date.now() < until || writes < Number(minWrites)) && Date.now() < hardStop) {
  const began = performance.now();
  const { ref, hash } = await blobs.put(images[writes % images.length]!);
  await writeFile(`${sessionFile}.tmp`, `{"type":"image","data":"${ref}"}\n`);
  await rename(`${sessionFile}.tmp`, sessionFile);
  const inTime = performance.now() - began < Number(graceMs);
  if (!inTime) late++;
  if (inTime && !(await blobs.get(hash))) missing++;
  writes++;
}
console.log(JSON.stringify({ writes, missing, late }));
