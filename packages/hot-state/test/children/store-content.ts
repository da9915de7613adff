// Stores `count` texts of about `kib` KiB each into a content registry on the file system
// (content in a blob store, records beside it), printing each id once it is stored, so that a
// parent can kill this process between or during writes.
import { createBlobStore } from "@stowage/blob-store";
import { createFsObjectStore } from "@stowage/storage-fs";
import { createContentRegistry } from "../../src/index.js";

const [root, count, kib, seed] = process.argv.slice(2) as [string, string, string, string];
const store = createFsObjectStore({ root });
const registry = createContentRegistry({
  content: createBlobStore({ store, layout: "sharded", prefix: "blobs/" }),
  records: store,
  prefix: "content-refs/",
});
for (let i = 0; i < Number(count); i++) {
  const line = `${seed} content ${i}: ${"lorem ipsum dolor sit amet ".repeat(4)}\n`;
  const text = line.repeat(Math.ceil((Number(kib) * 1024) / line.length));
  const { record } = await registry.storeText(text, { type: "log", producer: "executor" });
  process.stdout.write(`${record.artifact_id}\n`);
}
