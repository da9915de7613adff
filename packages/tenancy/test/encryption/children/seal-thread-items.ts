// One process of an encrypted fs deployment: posts items to a principal's thread as soon as it
// starts (racing another process to make that principal's first data key), then prints their ids.
import { createMemoryNotifier } from "@stowage/core";
import { createFsObjectStore } from "@stowage/storage-fs";
import { textItem } from "@stowage/thread-items";
import { createStowage, DEFAULT_STORES } from "../../../src/index.js";

const [root, principalId, jobId, label, count] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
const { threads } = DEFAULT_STORES;
const stowage = createStowage({
  shared: createFsObjectStore({ root }),
  notifier: createMemoryNotifier(),
  agentSessionsDir: root,
  stores: { threads },
  encryption: {},
});
const tenant = stowage.tenant({ kind: "user", id: principalId });
const posted = await Promise.all(
  Array.from({ length: Number(count) }, (_, i) =>
    tenant.threads.post({ jobId, alias: label }, textItem(`${label} ${i}`)),
  ),
);
console.log(JSON.stringify(posted.map((item) => item.id)));
