// Writes, each run into a new directory and a new store: ours (default: the file and its
// directory fsync'd, atomic) against the raw node:fs doing the same, the durable and atomic peer
// (write-file-atomic: fsync'd and atomic, directory not fsync'd; the ≥ 1.0× target), unstorage's
// setItemRaw followed by an fsync of the file (durable data, not atomic: shown) and the
// non-durable one (unstorage as it is; ≥ 0.7× through group commit).
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { type AnyComparison, type Contender, compare, growth, type ScratchSpace } from "@stowage/bench-kit";
import { createFsObjectStore } from "@stowage/storage-fs";
import { fsyncFile, peers } from "./peers.js";
import { inParallel, rawDurablePut, rawPut } from "./raw.js";

const COUNT = 10_000;
/**
 * Fsync'd puts one at a time: fewer, as each is two flushes in a row (10,000 took 20-27 s a run,
 * 309 s for the case's 15 runs); the cost per put, which the ratios compare, does not change with
 * the count. With puts in flight together (group commit) the count stays 10,000.
 */
const FSYNCED_ONE_AT_A_TIME = 2_000;
const BYTES = 4 * 1024;
/** Puts in flight in the group-commit case, as when a session's parts or images are written together. */
const IN_FLIGHT = 32;
const REPLACES = 1_000;
const THREAD_POOL = process.env.UV_THREADPOOL_SIZE
  ? `UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE}`
  : "4 threads, the default";

interface PutState {
  directory: string;
}

const keyOf = (i: number) => `k/${i}.bin`;

export function putCases(scratch: ScratchSpace): AnyComparison[] {
  const bodies = Array.from({ length: COUNT }, (_, i) => new Uint8Array(BYTES).fill(i % 251));
  const fresh = async () => ({ directory: await scratch.directory("puts") });
  const dispose = (state: PutState) => scratch.remove(state.directory);
  /** Runs `put(i)` for every i below `count`, one at a time or `IN_FLIGHT` at a time. */
  const each = (count: number, parallel: boolean, put: (i: number) => Promise<unknown>) =>
    inParallel(count, parallel ? IN_FLIGHT : 1, put);

  const durablePeers = (count: number, parallel: boolean): Contender<PutState>[] => [
    {
      name: "node:fs write temp + fsync + rename + fsync dir",
      kind: "baseline",
      target: { kind: "speed", min: 0.9 },
      run: async ({ directory }) => {
        await mkdir(join(directory, "k"));
        await each(count, parallel, (i) => rawDurablePut(join(directory, "k"), `${i}.bin`, bodies[i]!));
      },
    },
    {
      name: "write-file-atomic",
      kind: "peer",
      note: "durable peer: fsync'd, atomic; the directory is not fsync'd, so the rename is not durable",
      target: { kind: "speed", min: 1.0 },
      run: async ({ directory }) => {
        await mkdir(join(directory, "k"));
        await each(count, parallel, (i) =>
          peers.writeFileAtomic(join(directory, "k", `${i}.bin`), bodies[i]!),
        );
      },
    },
    {
      name: "unstorage fs setItemRaw + fsync of the file",
      kind: "peer",
      // Shown, no target: the targets are against durable peers that are also atomic, as ours is.
      // This one writes the key's file in place and fsyncs it once, where an atomic durable put
      // needs two flushes in a row (the body's before the rename, the directory's after it); a
      // crash mid-write leaves a torn file under the key, over an existing key the old value lost.
      note: "shown, no target: the data fsync'd, written in place (not atomic: a crash leaves a torn file)",
      run: async ({ directory }) => {
        const driver = peers.unstorageFs({ base: directory });
        await each(count, parallel, async (i) => {
          await driver.setItemRaw(`k:${i}.bin`, bodies[i]!, {});
          await fsyncFile(join(directory, "k", `${i}.bin`));
        });
      },
    },
    {
      name: "unstorage fs setItemRaw",
      kind: "peer",
      // Group commit is what lets a durable put come near a write that is not: the target is set
      // where puts are in flight together; one at a time it is shown. How many fsyncs are in
      // flight at once is bounded by Node's thread pool, so its size is printed.
      note: `not durable: no fsync; not atomic (Node's thread pool: ${THREAD_POOL})`,
      ...(parallel ? { target: { kind: "speed" as const, min: 0.7 } } : {}),
      run: async ({ directory }) => {
        const driver = peers.unstorageFs({ base: directory });
        await each(count, parallel, (i) => driver.setItemRaw(`k:${i}.bin`, bodies[i]!, {}));
      },
    },
  ];

  /** Fsync'd puts, one at a time or in flight together, against the durable peers. */
  const fsyncedCase = (count: number, parallel: boolean) => {
    const against = durablePeers(count, parallel);
    return compare<PutState>({
      name: `set ${count.toLocaleString("en-US")} x 4 KiB, ${parallel ? `${IN_FLIGHT} in flight, default fsync (group commit)` : "one at a time, default fsync"}`,
      units: { count, label: "ops" },
      // One round per contender, so that each starts a round once: these times follow the disk's
      // flush latency, which moved several-fold between runs on a quiet machine (2026-12-04: 1.1
      // to 6.1 s for the same 10,000 puts); with 3 rounds of 5 contenders, two never ran first
      // and one slow run decided a median.
      rounds: 1 + against.length,
      warmup: false,
      freshState: "a new directory and store",
      fresh,
      dispose,
      ours: async ({ directory }) => {
        const store = createFsObjectStore({ root: directory });
        await each(count, parallel, (i) => store.put(keyOf(i), bodies[i]!));
      },
      against,
    });
  };

  return [
    fsyncedCase(FSYNCED_ONE_AT_A_TIME, false),
    fsyncedCase(COUNT, true),
    compare<PutState>({
      name: `set ${COUNT.toLocaleString("en-US")} x 4 KiB, one at a time, fsync: false`,
      units: { count: COUNT, label: "ops" },
      rounds: 5,
      warmup: false,
      freshState: "a new directory and store",
      fresh,
      dispose,
      ours: async ({ directory }) => {
        const store = createFsObjectStore({ root: directory, fsync: false });
        await each(COUNT, false, (i) => store.put(keyOf(i), bodies[i]!));
      },
      against: [
        {
          name: "node:fs write temp + rename",
          kind: "baseline",
          target: { kind: "speed", min: 0.9 },
          run: async ({ directory }) => {
            await mkdir(join(directory, "k"));
            await each(COUNT, false, (i) => rawPut(join(directory, "k"), `${i}.bin`, bodies[i]!));
          },
        },
        {
          name: "unstorage fs setItemRaw",
          kind: "peer",
          note: "not atomic",
          target: { kind: "speed", min: 1.0 },
          run: async ({ directory }) => {
            const driver = peers.unstorageFs({ base: directory });
            await each(COUNT, false, (i) => driver.setItemRaw(`k:${i}.bin`, bodies[i]!, {}));
          },
        },
      ],
    }),
    compare<PutState>({
      name: `${REPLACES.toLocaleString("en-US")} atomic replaces of one 4 KiB key, default fsync`,
      units: { count: REPLACES, label: "ops" },
      rounds: 5,
      freshState: "a new directory and store",
      fresh,
      dispose,
      ours: async ({ directory }) => {
        const store = createFsObjectStore({ root: directory });
        for (let i = 0; i < REPLACES; i++) await store.put("state/current.json", bodies[i]!);
      },
      against: [
        {
          name: "write-file-atomic",
          kind: "peer",
          note: "fsync'd, atomic; the directory is not fsync'd",
          target: { kind: "speed", min: 1.0 },
          run: async ({ directory }) => {
            for (let i = 0; i < REPLACES; i++)
              await peers.writeFileAtomic(join(directory, "current.json"), bodies[i]!);
          },
        },
      ],
    }),
    // The largest size runs one round: three took 209 s of the bench for a cost per key that only
    // shows flat.
    ...growth<PutState>({
      name: "set, fsync: false, by key count",
      sizes: [1_000, 10_000, 100_000],
      unit: "key",
      make: (count) => ({
        name: `set ${count.toLocaleString("en-US")} x 4 KiB, one at a time, fsync: false`,
        units: { count, label: "ops" },
        rounds: count > COUNT ? 1 : 3,
        warmup: false,
        freshState: "a new directory and store",
        fresh,
        dispose,
        ours: async ({ directory }) => {
          const store = createFsObjectStore({ root: directory, fsync: false });
          for (let i = 0; i < count; i++) await store.put(keyOf(i), bodies[i % COUNT]!);
        },
        against: [
          {
            name: "unstorage fs setItemRaw",
            kind: "peer",
            run: async ({ directory }) => {
              const driver = peers.unstorageFs({ base: directory });
              for (let i = 0; i < count; i++) await driver.setItemRaw(`k:${i}.bin`, bodies[i % COUNT]!, {});
            },
          },
        ],
      }),
    }),
    ...sizeGrowth(fresh, dispose),
  ];
}

/** 64 puts then 64 gets at each object size, default fsync: the cost per KiB as objects grow. */
function sizeGrowth(
  fresh: () => Promise<PutState>,
  dispose: (state: PutState) => Promise<void>,
): AnyComparison[] {
  const OBJECTS = 64;
  return growth<PutState>({
    name: "put + get by object size (KiB), default fsync",
    sizes: [4, 64, 1024],
    unit: "KiB",
    items: (kib) => kib * OBJECTS,
    make: (kib) => {
      const body = new Uint8Array(kib * 1024).fill(7);
      return {
        name: `put + get of ${OBJECTS} objects of ${kib.toLocaleString("en-US")} KiB, default fsync`,
        units: { count: kib * 1024 * OBJECTS * 2, label: "B" },
        rounds: 5,
        freshState: "a new directory and store",
        fresh,
        dispose,
        ours: async ({ directory }) => {
          const store = createFsObjectStore({ root: directory });
          for (let i = 0; i < OBJECTS; i++) await store.put(keyOf(i), body);
          for (let i = 0; i < OBJECTS; i++) await store.get(keyOf(i));
        },
        against: [
          {
            name: "write-file-atomic + readFile",
            kind: "peer",
            run: async ({ directory }) => {
              for (let i = 0; i < OBJECTS; i++)
                await peers.writeFileAtomic(join(directory, `${i}.bin`), body);
              for (let i = 0; i < OBJECTS; i++) await readFile(join(directory, `${i}.bin`));
            },
          },
        ],
      };
    },
  });
}
