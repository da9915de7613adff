// Reads of objects written just before (untimed, `writeFilesSync`), each round in a new directory
// shared by the round's runs (none changes it): ours (the file opened without following a link, only a regular file is an object) against
// unstorage's getItemRaw and a bare readFile.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  type AnyComparison,
  compare,
  directoryPerRound,
  growth,
  type ScratchSpace,
} from "@stowage/bench-kit";
import { createFsObjectStore, type FsObjectStore } from "@stowage/storage-fs";
import { peers } from "./peers.js";
import { writeFilesSync } from "./written-files.js";

const COUNT = 10_000;
const BYTES = 4 * 1024;

interface ReadState {
  directory: string;
  store: FsObjectStore;
}

const keyOf = (i: number) => `k/${i}.bin`;

function readCase(scratch: ScratchSpace, count: number, bytes: number) {
  const body = new Uint8Array(bytes).fill(5);
  const round = directoryPerRound(scratch, "reads", (directory) =>
    writeFilesSync(join(directory, "k"), count, (i) => `${i}.bin`, body),
  );
  return compare<ReadState>({
    name: `get ${count.toLocaleString("en-US")} x ${bytes / 1024} KiB, one at a time`,
    units: { count, label: "ops" },
    rounds: 7,
    freshState:
      "a new directory each round, written just before its first run, and a new store (as by a process that starts and reads)",
    fresh: async (run) => {
      const directory = await round.directory(run);
      return { directory, store: createFsObjectStore({ root: directory }) };
    },
    cleanup: round.release,
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
  // The table's row (10,000 gets, 7 rounds) is the series' middle size; the largest runs one round
  // (three took 260 s of the bench, 100,000 gets a run, for a cost per key that only shows flat).
  return growth<ReadState>({
    name: "get 4 KiB, by key count",
    sizes: [1_000, COUNT, 100_000],
    unit: "key",
    make: (count) => ({
      ...readCase(scratch, count, BYTES),
      rounds: count === COUNT ? 7 : count > COUNT ? 1 : 3,
    }),
    leanLargest: true,
  });
}
