// Tries one put and prints its outcome as JSON, so a parent can check how a failure was mapped.
import { StowageError } from "@stowage/core";
import { createFsObjectStore } from "@stowage/storage-fs";

const [root, key, size] = process.argv.slice(2) as [string, string, string];
const store = createFsObjectStore({ root });
try {
  const result = await store.put(key, new Uint8Array(Number(size)).fill(1));
  console.log(JSON.stringify({ ok: true, result }));
} catch (err) {
  console.log(JSON.stringify({ ok: false, code: StowageError.is(err) ? err.code : String(err) }));
}
