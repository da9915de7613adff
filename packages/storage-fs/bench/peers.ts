// The libraries a user would pick instead, installed from npm when the bench starts (outside the
// workspace, so no lockfile of ours pins them), with the few calls the cases make typed here.
import { open } from "node:fs/promises";
import { installPeers } from "@stowage/bench-kit";

export interface UnstorageDriver {
  setItemRaw(key: string, value: Uint8Array, options: object): Promise<void>;
  getItemRaw(key: string, options: object): Promise<Uint8Array | null>;
  getKeys(base: string, options: object): Promise<string[]>;
  getMeta(key: string, options: object): Promise<{ size?: number; mtime?: Date }>;
}

export interface Cacache {
  /** The content's integrity: an ssri `Integrity` (its text `sha512-<base64>`). */
  put(cache: string, key: string, data: Uint8Array): Promise<{ toString(): string }>;
  get: { byDigest(cache: string, integrity: string): Promise<Buffer> };
}

type WriteFileAtomic = (path: string, data: Uint8Array) => Promise<void>;

const installed = await installPeers({
  unstorage: "^1.17.6",
  cacache: "^21.0.2",
  "write-file-atomic": "^8.0.0",
});

export const peers = {
  describe: installed.describe,
  unstorageFs: (
    await installed.load<{ default: (options: { base: string }) => UnstorageDriver }>("unstorage/drivers/fs")
  ).default,
  cacache: (await installed.load<{ default: Cacache }>("cacache")).default,
  writeFileAtomic: (await installed.load<{ default: WriteFileAtomic }>("write-file-atomic")).default,
};

/** What a durable write adds to a peer that does not fsync: open the file it wrote, fsync it, close it. */
export async function fsyncFile(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
