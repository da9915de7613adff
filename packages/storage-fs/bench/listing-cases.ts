// Listing against unstorage's fs driver, which returns names only (no size, no time, no order):
// ours returns sorted keys with size and modification time, and pages from a cursor.
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { BenchCase } from "@stowage/bench-kit";
import { createFsObjectStore, type FsObjectStore } from "@stowage/storage-fs";
import fsDriver from "unstorage/drivers/fs";

const LIST_COUNT = 10_000;
const PAGED_COUNT = 100_000;
const PAGE = 1_000;
const name = (i: number) => `k-${String(i).padStart(6, "0")}.bin`;

async function fill(directory: string, count: number): Promise<void> {
  await mkdir(directory, { recursive: true });
  const body = new Uint8Array(64).fill(7);
  for (let i = 0; i < count; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, count - i) }, (_, j) =>
        writeFile(join(directory, name(i + j)), body),
      ),
    );
  }
}

async function drain(store: FsObjectStore, prefix = ""): Promise<number> {
  let count = 0;
  for await (const _item of store.iterate({ prefix })) count++;
  return count;
}

async function pageThrough(store: FsObjectStore, prefix: string): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await store.list({ prefix, cursor, limit: PAGE });
    count += page.items.length;
    cursor = page.cursor;
  } while (cursor);
  return count;
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

export async function listingCases(base: string): Promise<BenchCase[]> {
  const listDir = join(base, "list");
  await fill(join(listDir, "keys"), LIST_COUNT);
  const pagedDir = join(base, "paged");
  await fill(join(pagedDir, "keys"), PAGED_COUNT);
  const onePageDir = join(base, "one-page");
  await fill(join(onePageDir, "keys"), PAGE);
  await settle(); // the directories are done changing, as a listed directory usually is

  const store = createFsObjectStore({ root: listDir });
  const unstorage = fsDriver({ base: join(listDir, "keys") });
  let coldStore = store;
  const pagedStore = createFsObjectStore({ root: pagedDir });
  const onePageStore = createFsObjectStore({ root: onePageDir });

  const check = (what: string, got: number, want: number) => {
    if (got !== want) throw new Error(`bench: ${what} listed ${got} keys, expected ${want}`);
  };

  return [
    {
      name: `iterate ${LIST_COUNT.toLocaleString("en-US")} keys (sorted, size + mtime) vs unstorage fs driver getKeys (names only)`,
      target: { kind: "speed", min: 1.0 },
      units: { count: LIST_COUNT, label: "ops" },
      rounds: 9,
      ours: async () => check("iterate", await drain(store, "keys/"), LIST_COUNT),
      baseline: async () => check("unstorage", (await unstorage.getKeys("", {})).length, LIST_COUNT),
    },
    {
      // A new store each run: nothing of the directory is known yet (the first listing after
      // start), so every file is stat'ed, which unstorage never does: shown so that it does not
      // regress (it was 0.14x with one awaited stat per key).
      name: `first iterate of ${LIST_COUNT.toLocaleString("en-US")} keys by a new store (reads and stats all) vs unstorage getKeys`,
      target: { kind: "speed", min: 0.1 },
      units: { count: LIST_COUNT, label: "ops" },
      rounds: 9,
      prepare() {
        coldStore = createFsObjectStore({ root: listDir });
      },
      ours: async () => check("cold iterate", await drain(coldStore, "keys/"), LIST_COUNT),
      baseline: async () => check("unstorage", (await unstorage.getKeys("", {})).length, LIST_COUNT),
    },
    {
      name: `${PAGED_COUNT.toLocaleString("en-US")} keys in pages of ${PAGE.toLocaleString("en-US")} vs ${PAGED_COUNT / PAGE} x one page of a ${PAGE.toLocaleString("en-US")}-key directory`,
      target: { kind: "time", max: 3 },
      units: { count: PAGED_COUNT, label: "ops" },
      rounds: 5,
      ours: async () => check("paged list", await pageThrough(pagedStore, "keys/"), PAGED_COUNT),
      async baseline() {
        for (let i = 0; i < PAGED_COUNT / PAGE; i++) {
          check("one page", (await onePageStore.list({ prefix: "keys/", limit: PAGE })).items.length, PAGE);
        }
      },
    },
  ];
}
