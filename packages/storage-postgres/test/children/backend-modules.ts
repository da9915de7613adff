// Child process: loads one backend entry as a user's code would, uses what it loaded where it can
// without a server, and prints, as JSON, every module URL resolved on the way.
// argv: <what> [dump] — postgres (the root entry, used: an embedded database loaded from the run's
// migrated dump `dump`, as initdb is not the subject; object store, notifier), postgres-metrics
// (the `/metrics` entry, imported), fs (storage-fs' root, used on a temp directory), s3
// (storage-s3's root, imported: using it needs a server).
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { recordResolvedModules } from "@stowage/test-support";

const stop = recordResolvedModules();
const [what, dump] = process.argv.slice(2);
/**
 * A sibling package's root, which this package does not depend on, by path: its `.ts` source, or
 * its `.js` when this child runs from the compiled copy of the sources (@stowage/test-support).
 */
const siblingRoot = (name: string) =>
  new URL(`../../../${name}/src/index${import.meta.url.endsWith(".ts") ? ".ts" : ".js"}`, import.meta.url)
    .href;
const text = (value: string) => new TextEncoder().encode(value);

if (what === "postgres") {
  const { connectEmbedded, createPostgresNotifier, createPostgresObjectStore } = await import(
    "@stowage/storage-postgres"
  );
  const connection = await connectEmbedded({ loadDataDir: new Blob([await readFile(dump!)]) });
  const store = createPostgresObjectStore({ db: connection.db });
  await store.put("graph/a.txt", text("a"));
  if ((await store.get("graph/a.txt"))?.byteLength !== 1) throw new Error("the object store lost a put");
  const notifier = createPostgresNotifier({ connection });
  let hear: (message: string) => void = () => {};
  const heard = new Promise<string>((resolve) => {
    hear = resolve;
  });
  await notifier.subscribe("graph", (message) => hear(message));
  await notifier.publish("graph", "hello");
  if ((await heard) !== "hello") throw new Error("the notifier lost a message");
  await notifier.close();
  await connection.close();
} else if (what === "postgres-metrics") {
  await import("@stowage/storage-postgres/metrics");
} else if (what === "fs") {
  const { createFsObjectStore } = await import(siblingRoot("storage-fs"));
  const root = await mkdtemp(join(tmpdir(), "stowage-graph-fs-"));
  const store = createFsObjectStore({ root });
  await store.put("graph/a.txt", text("a"));
  if ((await store.get("graph/a.txt"))?.byteLength !== 1) throw new Error("the fs store lost a put");
  await rm(root, { recursive: true, force: true });
} else if (what === "s3") {
  await import(siblingRoot("storage-s3"));
} else {
  throw new Error(`unknown entry ${what}`);
}
console.log(JSON.stringify(await stop()));
