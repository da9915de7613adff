// The stores every feed test runs on, and a logger that keeps what it is told.
import { join } from "node:path";
import { createMemoryObjectStore, type ObjectStore } from "@stowage/core";
import { recordingLogger as coreRecordingLogger } from "@stowage/core/testing";
import { createFsObjectStore } from "@stowage/storage-fs";
import { tempDirectory } from "@stowage/test-support";

const base = await tempDirectory("stowage-thread-feeds-");
let counter = 0;

/** A fresh, empty store of each kind the feeds are tested on. */
export const FEED_STORES: readonly { name: string; create(): ObjectStore }[] = [
  { name: "memory store", create: () => createMemoryObjectStore() },
  // fsync off: these tests are about the feeds, not the disk (storage-fs tests its durability).
  {
    name: "fs store",
    create: () => createFsObjectStore({ root: join(base, `store-${++counter}`), fsync: false }),
  },
];

/** A logger that records its warnings. */
export function recordingLogger() {
  const warnings: { message: string; details: Record<string, unknown> | undefined }[] = [];
  return { logger: coreRecordingLogger(warnings).logger, warnings };
}

/** Every key under `prefix`, in listing order. */
export async function keysUnder(store: ObjectStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const { key } of store.iterate({ prefix })) keys.push(key);
  return keys;
}

/** Resolves once `condition()` holds, polling; rejects after `ms`. */
export async function eventually(condition: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
