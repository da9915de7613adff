// Stores `count` text artifacts of about `kib` KiB each into an fs-backed registry, printing each
// id once it is stored, so that a parent can kill this process between or during writes.
import { createFsObjectStore } from "@stowage/storage-fs";
import { createArtifactRegistry } from "../../src/index.js";

const [root, count, kib, seed] = process.argv.slice(2) as [string, string, string, string];
const registry = createArtifactRegistry({ store: createFsObjectStore({ root }) });
for (let i = 0; i < Number(count); i++) {
  const line = `${seed} artifact ${i}: ${"lorem ipsum dolor sit amet ".repeat(4)}\n`;
  const text = line.repeat(Math.ceil((Number(kib) * 1024) / line.length));
  const { record } = await registry.storeText(text, { type: "log", producer: "executor" });
  process.stdout.write(`${record.artifact_id}\n`);
}
