// Listing, each round over a new directory written just before (untimed, `writeFilesSync`) and
// shared by the round's runs, each with a new store or driver: right after the writes, as a user
// lists what they just stored, and once the directory has settled (a listing before, 300 ms
// later). Ours lists through a store opened on the directory (a store that wrote the files itself
// would know no more of them: what it keeps of a directory comes from listing it). unstorage's
// getKeys returns names only (no size, no time, no order), in one array: it is measured against
// ours's names-only listing in arrays (`keys().byPage()`, sorted; the same listing handed out key
// by key is shown beside it), and with a getMeta per key against ours's `iterate` (sorted keys with
// size and modification time), which is what it takes there to know the sizes.
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import {
  type AnyComparison,
  compare,
  directoryPerRound,
  growth,
  type ScratchSpace,
} from "@stowage/bench-kit";
import { createFsObjectStore, type FsObjectStore } from "@stowage/storage-fs";
import { peers, type UnstorageDriver } from "./peers.js";
import { writeFilesSync } from "./written-files.js";

const COUNT = 10_000;
const PAGED = 100_000;
const PAGE = 1_000;
const name = (i: number) => `k-${String(i).padStart(6, "0")}.bin`;
const body = new Uint8Array(64).fill(7);

interface ListState {
  directory: string;
  store: FsObjectStore;
  unstorage: UnstorageDriver;
}

/** Files to list, written once a round into a directory the round's contenders share. */
const keysPerRound = (scratch: ScratchSpace, count: number) =>
  directoryPerRound(scratch, "list", (directory) =>
    writeFilesSync(join(directory, "keys"), count, name, body),
  );

/** A run's store and unstorage driver, new on the round's directory; `settled`: listed once before the run. */
async function opened(directory: string, settled: boolean): Promise<ListState> {
  const store = createFsObjectStore({ root: directory, fsync: false });
  const unstorage = peers.unstorageFs({ base: join(directory, "keys") });
  if (settled) {
    // The listing a settled directory has had before, once it is 300 ms old (ours keeps a
    // snapshot of a directory unchanged for 100 ms).
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Both, whichever contender runs: ours's own listings (by page, key by key) and getKeys alike.
    await drain(store);
    await unstorage.getKeys("", {});
  }
  return { directory, store, unstorage };
}

async function drain(store: FsObjectStore): Promise<number> {
  let count = 0;
  for await (const _item of store.iterate({ prefix: "keys/" })) count++;
  return count;
}

async function drainKeys(store: FsObjectStore): Promise<number> {
  let count = 0;
  for await (const _key of store.keys({ prefix: "keys/" })) count++;
  return count;
}

async function drainPages(store: FsObjectStore): Promise<number> {
  let count = 0;
  for await (const page of store.keys({ prefix: "keys/" }).byPage()) count += page.length;
  return count;
}

function check(what: string, got: number, want: number): void {
  if (got !== want) throw new Error(`bench: ${what} listed ${got} keys, expected ${want}`);
}

/** What a listing returns: `names` (ours `keys().byPage()`), or `items` with size and time (ours `iterate`). */
type Listed = "names" | "items";

function listCase(scratch: ScratchSpace, count: number, settled: boolean, listed: Listed) {
  const getKeys = {
    name: "unstorage fs getKeys",
    kind: "peer" as const,
    note: "names only: no size, no time, no order",
    run: async ({ unstorage }: ListState) =>
      check("getKeys", (await unstorage.getKeys("", {})).length, count),
  };
  const against =
    listed === "names"
      ? [
          { ...getKeys, target: { kind: "speed" as const, min: 1.0 } },
          {
            name: "ours key by key (`for await` over `keys()`)",
            kind: "baseline" as const,
            note: "the same listing, one promise a key: shown, no target",
            run: async ({ store }: ListState) => check("keys", await drainKeys(store), count),
          },
          {
            name: "node:fs readdir (names only)",
            kind: "baseline" as const,
            run: async ({ directory }: ListState) =>
              check("readdir", (await readdir(join(directory, "keys"))).length, count),
          },
        ]
      : [
          {
            name: "unstorage fs getKeys + getMeta of each",
            kind: "peer" as const,
            note: "names, sizes and times, as ours",
            target: { kind: "speed" as const, min: 1.0 },
            run: async ({ unstorage }: ListState) => {
              const keys = await unstorage.getKeys("", {});
              for (const key of keys) await unstorage.getMeta(key, {});
              check("getKeys + getMeta", keys.length, count);
            },
          },
          { ...getKeys, note: "names only: shown beside the listing of names and sizes, no target" },
        ];
  const what =
    listed === "names" ? "keys (names only, `keys().byPage()`)" : "items (sizes and times, `iterate`)";
  const round = keysPerRound(scratch, count);
  return compare<ListState>({
    name: `list ${count.toLocaleString("en-US")} ${what} ${settled ? "of a settled directory (listed before)" : "right after writing them"}`,
    units: { count, label: "ops" },
    rounds: 7,
    freshState: `a new directory each round, written just before its first run${settled ? ", listed once after 300 ms by the run's new store and by its new driver" : ", and a new store or driver"}`,
    fresh: async (run) => opened(await round.directory(run), settled),
    cleanup: round.release,
    ours: async ({ store }) =>
      listed === "names"
        ? check("keys by page", await drainPages(store), count)
        : check("iterate", await drain(store), count),
    against,
  });
}

/** The table's row (names right after writing 10,000) is the by-count series' middle size. */
export function listingCases(scratch: ScratchSpace): AnyComparison[] {
  const paged = keysPerRound(scratch, PAGED);
  const onePage = keysPerRound(scratch, PAGE);
  return [
    ...growth<ListState>({
      name: "list right after writing, by key count",
      sizes: [1_000, COUNT, 100_000],
      unit: "key",
      // 1,000 keys list in about 2-4 ms, and one round's ratio ranged 0.4-4x on a quiet machine:
      // 3 rounds of that were one scheduler hiccup from a miss, 11 still gave a median within the
      // noise (2026-12-05: 1.00x, where a 31-round probe of the same listings gave 1.28x); 21 cost
      // about 10 s more.
      make: (count) => ({
        ...listCase(scratch, count, false, "names"),
        rounds: count < COUNT ? 21 : count === COUNT ? 7 : 3,
      }),
      leanLargest: true,
    }),
    listCase(scratch, COUNT, false, "items"),
    listCase(scratch, COUNT, true, "names"),
    listCase(scratch, COUNT, true, "items"),
    compare<ListState>({
      name: `${PAGED.toLocaleString("en-US")} keys in pages of ${PAGE.toLocaleString("en-US")}, settled, vs ${PAGED / PAGE} x one page of a ${PAGE.toLocaleString("en-US")}-key directory`,
      units: { count: PAGED, label: "ops" },
      rounds: 3,
      warmup: false,
      freshState:
        "a new directory each round (100,000 keys for ours, 1,000 for the baseline), listed once by a new store after 300 ms",
      fresh: async (run) => opened(await (run.contender === "ours" ? paged : onePage).directory(run), true),
      cleanup: async () => {
        await paged.release();
        await onePage.release();
      },
      ours: async ({ store }) => {
        let count = 0;
        let cursor: string | undefined;
        do {
          const page = await store.list({ prefix: "keys/", cursor, limit: PAGE });
          count += page.items.length;
          cursor = page.cursor;
        } while (cursor);
        check("paged list", count, PAGED);
      },
      against: [
        {
          name: "one page, 100 times",
          kind: "baseline",
          target: { kind: "time", max: 3 },
          run: async ({ store }) => {
            for (let i = 0; i < PAGED / PAGE; i++) {
              check("one page", (await store.list({ prefix: "keys/", limit: PAGE })).items.length, PAGE);
            }
          },
        },
      ],
    }),
  ];
}
