// Reads of objects written just before (untimed), each run in a new directory by the contender's
// own writer: ours (the file opened without following a link, only a regular file is an object)
// against unstorage's getItemRaw and a bare readFile.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type AnyComparison, compare, growth, type RunInfo, type ScratchSpace } from "@stowage/bench-kit";
import { createFsObjectStore, type FsObjectStore } from "@stowage/storage-fs";
import { peers } from "./peers.js";

const COUNT = 10_000;
const BYTES = 4 * 1024;

interface ReadState {
  directory: string;
  store: FsObjectStore;
}

const keyOf = (i: number) => `k/${i}.bin`;

/** Writes `count` objects of `body` the way the contender about to read them would have. */
async function written(
  scratch: ScratchSpace,
  run: RunInfo,
  count: number,
  body: Uint8Array,
): Promise<ReadState> {
  const directory = await scratch.directory("reads");
  const store = createFsObjectStore({ root: directory, fsync: false });
  if (run.contender === "ours") {
    for (let i = 0; i < count; i++) await store.put(keyOf(i), body);
  } else if (run.contender.startsWith("unstorage")) {
    const driver = peers.unstorageFs({ base: directory });
    for (let i = 0; i < count; i++) await driver.setItemRaw(`k:${i}.bin`, body, {});
  } else {
    await mkdir(join(directory, "k"));
    for (let i = 0; i < count; i++) await writeFile(join(directory, "k", `${i}.bin`), body);
  }
  // The reader is a store opened afresh, as by a process that starts and reads.
  return { directory, store: createFsObjectStore({ root: directory }) };
}

function readCase(scratch: ScratchSpace, count: number, bytes: number) {
  const body = new Uint8Array(bytes).fill(5);
  return compare<ReadState>({
    name: `get ${count.toLocaleString("en-US")} x ${bytes / 1024} KiB, one at a time`,
    units: { count, label: "ops" },
    rounds: 7,
    freshState: "a new directory its contender wrote just before, and a new store",
    fresh: (run) => written(scratch, run, count, body),
    dispose: (state) => scratch.remove(state.directory),
    ours: async ({ store }) => {
      for (let i = 0; i < count; i++)
        if (!(await store.get(keyOf(i)))) throw new Error(`bench: ${keyOf(i)} missing`);
    },
    against: [
      {
        name: "unstorage fs getItemRaw",
        kind: "peer",
        note: "follows links, reads whatever is at the path",
        target: { kind: "speed", min: 1.0 },
        run: async ({ directory }) => {
          const driver = peers.unstorageFs({ base: directory });
          for (let i = 0; i < count; i++)
            if (!(await driver.getItemRaw(`k:${i}.bin`, {}))) throw new Error("missing");
        },
      },
      {
        name: "node:fs readFile",
        kind: "baseline",
        run: async ({ directory }) => {
          for (let i = 0; i < count; i++) await readFile(join(directory, "k", `${i}.bin`));
        },
      },
    ],
  });
}

export function readCases(scratch: ScratchSpace): AnyComparison[] {
  return [
    readCase(scratch, COUNT, BYTES),
    ...growth<ReadState>({
      name: "get 4 KiB, by key count",
      sizes: [1_000, 10_000, 100_000],
      unit: "key",
      make: (count) => ({ ...readCase(scratch, count, BYTES), rounds: 3 }),
      leanLargest: true,
    }),
  ];
}
