// @stowage/blob-store on this store against npm's cacache, the content-addressed store a Node user
// would pick, and the raw node:fs + node:crypto doing the same work. Each run writes into a new
// directory; every put is of new content (no dedup hit on either side). cacache does not fsync:
// the durable peer is cacache with its content file fsync'd after the put (atomic, as ours is:
// cacache writes a temp file and moves it into place).
import { join } from "node:path";
import {
  type AnyComparison,
  type Contender,
  compare,
  type RunInfo,
  type ScratchSpace,
} from "@stowage/bench-kit";
import { type BlobStore, createBlobStore } from "@stowage/blob-store";
import { createFsObjectStore } from "@stowage/storage-fs";
import { fsyncFile, peers } from "./peers.js";
import { inParallel, rawBlobPut } from "./raw.js";

const COUNT = 10_000;
/** Fsync'd puts one at a time: fewer, as in the put cases (10,000 took 358 s over the case's 12 runs). */
const FSYNCED_ONE_AT_A_TIME = 2_000;
const BYTES = 4 * 1024;
const IN_FLIGHT = 32;
const BIG = 64 * 1024 * 1024;
const CHUNK = 64 * 1024;

interface BlobState {
  directory: string;
}

/** cacache keeps content at content-v2/sha512/<2 hex>/<2 hex>/<rest>; its put returns `sha512-<base64>`. */
function cacacheContentPath(cache: string, integrity: string): string {
  const hex = Buffer.from(integrity.slice("sha512-".length), "base64").toString("hex");
  return join(cache, "content-v2", "sha512", hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
}

function streamOf(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let index = 0;
  return new ReadableStream({
    pull(controller) {
      if (index === chunks.length) controller.close();
      else controller.enqueue(chunks[index++]!);
    },
  });
}

export function blobCases(scratch: ScratchSpace): AnyComparison[] {
  const bodies = Array.from({ length: COUNT }, () => new Uint8Array(BYTES));
  let generation = 0;
  // New content every run: no put is a dedup hit, on either side.
  const fresh = async () => {
    generation++;
    for (let i = 0; i < COUNT; i++) new DataView(bodies[i]!.buffer).setUint32(0, generation * COUNT + i);
    return { directory: await scratch.directory("blobs") };
  };
  const dispose = (state: BlobState) => scratch.remove(state.directory);
  const each = (count: number, parallel: boolean, put: (i: number) => Promise<unknown>) =>
    inParallel(count, parallel ? IN_FLIGHT : 1, put);

  const putAgainst = (count: number, parallel: boolean, fsync: boolean): Contender<BlobState>[] => [
    {
      name: `sha256 + write temp${fsync ? " + fsync" : ""} + rename${fsync ? " + fsync dir" : ""}`,
      kind: "baseline",
      target: { kind: "speed", min: 0.8 },
      run: ({ directory }) => each(count, parallel, (i) => rawBlobPut(directory, [bodies[i]!], fsync)),
    },
    ...(fsync
      ? [
          {
            name: "cacache.put + fsync of the content file",
            kind: "peer" as const,
            note: "durable, atomic peer: the content fsync'd; neither its directory nor the index",
            target: { kind: "speed" as const, min: 1.0 },
            run: ({ directory }: BlobState) =>
              each(count, parallel, async (i) => {
                const integrity = await peers.cacache.put(directory, `k-${i}`, bodies[i]!);
                await fsyncFile(cacacheContentPath(directory, String(integrity)));
              }),
          },
        ]
      : []),
    {
      name: "cacache.put",
      kind: "peer",
      note: "not durable: no fsync",
      ...(parallel || !fsync ? { target: { kind: "speed" as const, min: fsync ? 0.7 : 1.0 } } : {}),
      run: ({ directory }) =>
        each(count, parallel, (i) => peers.cacache.put(directory, `k-${i}`, bodies[i]!)),
    },
  ];

  const putCase = (parallel: boolean, fsync: boolean) => {
    const count = fsync && !parallel ? FSYNCED_ONE_AT_A_TIME : COUNT;
    const against = putAgainst(count, parallel, fsync);
    return compare<BlobState>({
      name: `blob put ${count.toLocaleString("en-US")} x 4 KiB, ${parallel ? `${IN_FLIGHT} in flight` : "one at a time"}, ${fsync ? "default fsync" : "fsync: false"}${parallel && fsync ? " (group commit)" : ""}`,
      units: { count, label: "ops" },
      // One round per contender, so that each starts a round once (see put-cases.ts: fsync'd
      // times follow the disk's flush latency, which moves several-fold between runs).
      rounds: 1 + against.length,
      warmup: false,
      freshState: "new content, a new directory and blob store",
      fresh,
      dispose,
      ours: async ({ directory }) => {
        const blobs = createBlobStore({ store: createFsObjectStore({ root: directory, fsync }) });
        await each(count, parallel, (i) => blobs.put(bodies[i]!));
      },
      against,
    });
  };

  interface ReadState extends BlobState {
    blobs: BlobStore;
    hashes: string[];
    integrities: string[];
  }
  const written = async (run: RunInfo): Promise<ReadState> => {
    const { directory } = await fresh();
    const blobs = createBlobStore({ store: createFsObjectStore({ root: directory, fsync: false }) });
    const hashes: string[] = [];
    const integrities: string[] = [];
    // Written IN_FLIGHT at a time (untimed): one at a time, the writes were most of the case's 262 s.
    await inParallel(COUNT, IN_FLIGHT, async (i) => {
      if (run.contender === "ours") hashes[i] = (await blobs.put(bodies[i]!)).hash;
      else integrities[i] = String(await peers.cacache.put(directory, `k-${i}`, bodies[i]!));
    });
    return {
      directory,
      hashes,
      integrities,
      blobs: createBlobStore({ store: createFsObjectStore({ root: directory }) }),
    };
  };

  const chunks: Uint8Array[] = [];
  const big = new Uint8Array(BIG).map((_, i) => (i * 31) % 251);
  for (let offset = 0; offset < BIG; offset += CHUNK) chunks.push(big.subarray(offset, offset + CHUNK));

  return [
    putCase(false, true),
    putCase(true, true),
    putCase(false, false),
    compare<ReadState>({
      name: `blob get ${COUNT.toLocaleString("en-US")} x 4 KiB, hash verified`,
      units: { count: COUNT, label: "ops" },
      rounds: 5,
      freshState: "a new directory its contender wrote just before, and a new blob store",
      fresh: written,
      dispose,
      ours: async ({ blobs, hashes }) => {
        for (const hash of hashes) await blobs.get(hash);
      },
      against: [
        {
          name: "cacache.get.byDigest",
          kind: "peer",
          note: "verified too",
          target: { kind: "speed", min: 1.0 },
          run: async ({ directory, integrities }) => {
            for (const integrity of integrities) await peers.cacache.get.byDigest(directory, integrity);
          },
        },
      ],
    }),
    compare<BlobState>({
      name: "blob put of 64 MiB from a stream (64 KiB chunks), default fsync",
      units: { count: BIG, label: "B" },
      rounds: 5,
      freshState: "new content, a new directory and blob store",
      fresh: async () => {
        new DataView(big.buffer).setUint32(0, ++generation);
        return { directory: await scratch.directory("big") };
      },
      dispose,
      ours: ({ directory }) =>
        createBlobStore({ store: createFsObjectStore({ root: directory }) }).put(streamOf(chunks)),
      against: [
        {
          name: "sha256 + write temp + fsync + rename + fsync dir",
          kind: "baseline",
          target: { kind: "speed", min: 0.8 },
          run: ({ directory }) => rawBlobPut(directory, chunks, true),
        },
      ],
    }),
  ];
}
