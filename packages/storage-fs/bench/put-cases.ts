// Small writes against what a user would pick instead: unstorage's fs driver (fsync off, not
// atomic) and write-file-atomic (atomic replace, fsync'd).
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { BenchCase } from "@stowage/bench-kit";
import { createFsObjectStore, type FsObjectStore } from "@stowage/storage-fs";
import fsDriver from "unstorage/drivers/fs";
import writeFileAtomic from "write-file-atomic";

const PUT_COUNT = 10_000;
const REPLACE_COUNT = 1_000;
const BYTES = 4 * 1024;

export function putCases(base: string): BenchCase[] {
  const bodies = Array.from({ length: PUT_COUNT }, (_, i) => new Uint8Array(BYTES).fill(i % 251));
  const buffers = bodies.map((body) => Buffer.from(body.buffer, body.byteOffset, body.byteLength));
  let run = 0;
  let ours: FsObjectStore;
  let unstorage: ReturnType<typeof fsDriver>;
  let directory = "";

  async function freshDirectory() {
    if (directory) await rm(directory, { recursive: true, force: true });
    directory = join(base, `puts-${run++}`);
    await mkdir(join(directory, "ours"), { recursive: true });
    await mkdir(join(directory, "peer"), { recursive: true });
    ours = createFsObjectStore({ root: join(directory, "ours"), fsync: false });
    unstorage = fsDriver({ base: join(directory, "peer") });
  }

  const durable = createFsObjectStore({ root: join(base, "replace-ours") });
  const peerReplaceDir = join(base, "replace-peer");

  return [
    {
      name: `${PUT_COUNT.toLocaleString("en-US")} puts of 4 KiB, fsync off, vs unstorage fs driver setItemRaw`,
      target: { kind: "speed", min: 1.0 },
      units: { count: PUT_COUNT, label: "ops" },
      rounds: 5,
      warmup: false,
      prepare: freshDirectory,
      async ours() {
        for (let i = 0; i < PUT_COUNT; i++) await ours.put(`k/${i}.bin`, bodies[i]!);
      },
      async baseline() {
        for (let i = 0; i < PUT_COUNT; i++) await unstorage.setItemRaw!(`k:${i}.bin`, buffers[i]!, {});
      },
      cleanup: () => rm(directory, { recursive: true, force: true }),
    },
    {
      name: `${REPLACE_COUNT.toLocaleString("en-US")} atomic replaces of one 4 KiB key, fsync'd, vs write-file-atomic`,
      target: { kind: "speed", min: 1.0 },
      units: { count: REPLACE_COUNT, label: "ops" },
      rounds: 5,
      prepare: () => mkdir(peerReplaceDir, { recursive: true }).then(() => {}),
      async ours() {
        for (let i = 0; i < REPLACE_COUNT; i++) await durable.put("state/current.json", bodies[i]!);
      },
      async baseline() {
        for (let i = 0; i < REPLACE_COUNT; i++)
          await writeFileAtomic(join(peerReplaceDir, "current.json"), buffers[i]!);
      },
    },
  ];
}
