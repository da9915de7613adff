import { randomUUID } from "node:crypto";
import type { SessionKey, SessionStoreEntry } from "@anthropic-ai/claude-agent-sdk";
import {
  checkpointDatabase,
  compare,
  freshDatabase,
  growth,
  referenceSource,
  runComparisons,
} from "@stowage/bench-kit";
import { realisticTranscriptEntries } from "@stowage/sessions/testing";
import pg from "pg";
import { connectPostgres } from "../src/index.js";
import { createPostgresSessionStore } from "../src/sessions/index.js";

// Our SessionStore (createPostgresSessionStore) against Anthropic's reference PostgresSessionStore
// from the SDK repository's session-store examples (not on npm: its source is brought next to this
// bench at run time from a local mirror or GitHub, never committed), the way the issue measures
// them: interleaved rounds, each run on a new empty database of the same server, both through a
// pool of 10 connections (node-postgres's default, the reference's documented setup).
const url = process.env.DATABASE_URL;
if (!url) {
  console.error("the SessionStore bench needs PostgreSQL: set DATABASE_URL");
  process.exit(1);
}
const POOL = 10;

const reference = await referenceSource({
  repo: "anthropics/claude-agent-sdk-typescript",
  path: "examples/session-stores/postgres/src/PostgresSessionStore.ts",
  directory: new URL(`./.reference-${process.pid}/`, import.meta.url).pathname,
});
console.log(`peer: ${reference.origin}`);
interface BenchStore {
  append(key: SessionKey, entries: SessionStoreEntry[]): Promise<void>;
  load(key: SessionKey): Promise<SessionStoreEntry[] | null>;
}
const { PostgresSessionStore } = (await import(reference.file)) as {
  PostgresSessionStore: new (options: { pool: pg.Pool }) => BenchStore & { ensureSchema(): Promise<void> };
};
await reference.dispose();

// Transcript lines shaped like the SDK mirrors them, taken from a realistic session and given
// fresh uuids (about 4.7 KB of JSON each, most over the 2 KB at which PostgreSQL compresses).
const sessionId = randomUUID();
const lines = realisticTranscriptEntries(sessionId);
const entriesOf = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ ...lines[i % lines.length]!, uuid: randomUUID() }));
const inBatches = (all: SessionStoreEntry[], size: number) =>
  Array.from({ length: Math.ceil(all.length / size) }, (_, i) => all.slice(i * size, (i + 1) * size));

const sayPoolError = (err: Error) => console.warn(`a pool connection ended: ${err.message}`);
const admin = new pg.Pool({ connectionString: url, max: 1 });
admin.on("error", sayPoolError);

interface StoreState {
  store: BenchStore;
  key: SessionKey;
  close(): Promise<void>;
}
/** A store of one side on a new empty database, its tables made (untimed). */
async function freshStore(contender: string): Promise<StoreState> {
  const database = await freshDatabase(admin, url!, "session_store");
  const key = { projectKey: "-workspace-app", sessionId: randomUUID() };
  if (contender === "ours") {
    const connection = await connectPostgres({ url: database.url, maxConnections: POOL });
    const store = createPostgresSessionStore({ db: connection.db });
    return {
      store,
      key,
      close: async () => {
        await connection.close();
        await database.drop();
      },
    };
  }
  const pool = new pg.Pool({ connectionString: database.url, max: POOL });
  pool.on("error", sayPoolError);
  const store = new PostgresSessionStore({ pool });
  await store.ensureSchema();
  return {
    store,
    key,
    close: async () => {
      await pool.end();
      await database.drop();
    },
  };
}
/** The state with the server checkpointed, so the run does not pay for the WAL of the runs before it. */
async function settled(state: StoreState): Promise<StoreState> {
  await checkpointDatabase(admin);
  return state;
}
const appendAll = async ({ store, key }: StoreState, batches: SessionStoreEntry[][]) => {
  for (const batch of batches) await store.append(key, batch);
};

const peer = "Anthropic's reference PostgresSessionStore";
const target = { kind: "speed" as const, min: 1.0 };
const notes = [
  "The reference keeps no summary, has no idempotency (a retried batch is stored twice) and stores jsonb;",
  "ours folds the summary atomically with the rows, dedupes on uuid and checks every entry it loads.",
];
const appendCase = (count: number, size: number, rounds: number) => {
  const batches = inBatches(entriesOf(count), size);
  return compare<StoreState>({
    name: `SessionStore.append of ${count.toLocaleString("en-US")} entries in batches of ${size}`,
    units: { count, label: "ops" },
    rounds,
    freshState: "a new empty database (tables made), a new store on a pool of 10, then a CHECKPOINT",
    fresh: async ({ contender }) => settled(await freshStore(contender)),
    dispose: (state) => state.close(),
    ours: (state) => appendAll(state, batches),
    against: [{ name: peer, kind: "peer", target, run: (state) => appendAll(state, batches) }],
    notes,
  });
};

const LOAD = 50_000;
const loadBatches = inBatches(entriesOf(LOAD), 500);
const loadCase = compare<StoreState>({
  name: `SessionStore.load of a transcript of ${LOAD.toLocaleString("en-US")} entries`,
  units: { count: LOAD, label: "ops" },
  rounds: 7,
  freshState:
    "a new database holding only this transcript, appended by the same side (untimed), then a CHECKPOINT",
  fresh: async ({ contender }) => {
    const state = await freshStore(contender);
    await appendAll(state, loadBatches);
    return settled(state);
  },
  dispose: (state) => state.close(),
  ours: async ({ store, key }) => {
    if ((await store.load(key))?.length !== LOAD) throw new Error("ours loaded another transcript");
  },
  against: [
    {
      name: peer,
      kind: "peer",
      target,
      run: async ({ store, key }) => {
        if ((await store.load(key))?.length !== LOAD) throw new Error("the peer loaded another transcript");
      },
    },
  ],
  notes,
});

try {
  await runComparisons("@stowage/storage-postgres: the Agent SDK SessionStore vs its reference", [
    appendCase(50_000, 100, 7),
    ...growth({
      name: "SessionStore.append in batches of 500",
      sizes: [5_000, 50_000, 200_000],
      unit: "entry",
      make: (count) => appendCase(count, 500, count > 50_000 ? 3 : 7),
    }),
    loadCase,
  ]);
} finally {
  await admin.end();
}
