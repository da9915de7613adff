// Writes a stream that never ends into an fs store, telling the parent once 1 MiB is on disk,
// so that the parent can kill this process in the middle of a write.
import { createFsObjectStore } from "@stowage/storage-fs";

const [root, key] = process.argv.slice(2) as [string, string];
const store = createFsObjectStore({ root });
let sent = 0;
const body = new ReadableStream<Uint8Array>({
  async pull(controller) {
    if (sent === 16) process.stdout.write("writing\n");
    if (sent >= 16) await new Promise((resolve) => setTimeout(resolve, 50));
    controller.enqueue(new Uint8Array(64 * 1024).fill(sent++ % 256));
  },
});
await store.put(key, body);
