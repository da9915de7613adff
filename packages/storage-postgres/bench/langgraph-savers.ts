import type { RunnableConfig } from "@langchain/core/runnables";
import type {
  BaseCheckpointSaver,
  ChannelVersions,
  Checkpoint,
  CheckpointMetadata,
} from "@langchain/langgraph-checkpoint";
import { compare, freshDatabase, installPeers, runComparisons } from "@stowage/bench-kit";
import pg from "pg";
import { connectPostgres } from "../src/index.js";
import { createPostgresCheckpointSaver } from "../src/langgraph/index.js";

// Our LangGraph checkpoint saver on PostgreSQL (createPostgresCheckpointSaver, the langgraph_*
// tables) against LangGraph's own PostgresSaver, on the same server, each in a database of its
// own: put, putWrites, getTuple and list, the reads on a thread of 10,000 checkpoints. The peer is
// installed from npm at bench time, never a dependency.
const url = process.env.DATABASE_URL;
if (!url) {
  console.error("the LangGraph saver bench needs PostgreSQL: set DATABASE_URL");
  process.exit(1);
}
const peers = await installPeers({
  "@langchain/langgraph-checkpoint-postgres": "^1.0.5",
  "@langchain/langgraph-checkpoint": "^1.2.2",
  "@langchain/core": "^1.1.48",
});
console.log(peers.describe());
type PostgresSaverClass = {
  fromConnString(url: string): BaseCheckpointSaver & {
    pool: pg.Pool;
    setup(): Promise<void>;
    end(): Promise<void>;
  };
};
// An idle connection ended by the server (another process's pg_terminate_backend on a shared
// machine) is an error event on its pool: said, not a crash of the whole run.
const sayPoolError = (err: Error) => console.warn(`a pool connection ended: ${err.message}`);
const { PostgresSaver } = await peers.load<{ PostgresSaver: PostgresSaverClass }>(
  "@langchain/langgraph-checkpoint-postgres",
);
const admin = new pg.Pool({ connectionString: url, max: 1 });
admin.on("error", sayPoolError);

/** A graph's step as LangGraph writes it: the messages channel and the step counter change. */
const THREAD = "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10";
const READ_CHECKPOINTS = 10_000;
const message = (step: number) => ({
  lc: 1,
  type: "constructor",
  id: ["langchain_core", "messages", "AIMessage"],
  kwargs: {
    content: `step ${step}: ${"the model's answer, a few sentences long. ".repeat(6)}`,
    id: `msg_${step}`,
  },
});
function step(
  index: number,
  parent?: string,
): {
  config: RunnableConfig;
  checkpoint: Checkpoint;
  metadata: CheckpointMetadata;
  versions: ChannelVersions;
} {
  const id = `1f0b${index.toString(16).padStart(8, "0")}-0000-6000-8000-000000000000`;
  const versions = { messages: index + 1, step: index + 1 };
  return {
    config: {
      configurable: { thread_id: THREAD, checkpoint_ns: "", ...(parent ? { checkpoint_id: parent } : {}) },
    },
    checkpoint: {
      v: 4,
      id,
      ts: new Date(Date.UTC(2026, 10, 29, 0, 0, index)).toISOString(),
      channel_values: { messages: [message(index)], step: index },
      channel_versions: versions,
      versions_seen: { agent: { step: index } },
    },
    metadata: { source: "loop", step: index, parents: {} },
    versions,
  };
}
const steps = (count: number) => {
  const all = [];
  let parent: string | undefined;
  for (let i = 0; i < count; i++) {
    const next = step(i, parent);
    all.push(next);
    parent = next.checkpoint.id;
  }
  return all;
};

interface SaverState {
  saver: BaseCheckpointSaver;
  close(): Promise<void>;
}
/** A saver of each side on a new empty database: tables made, untimed. */
async function freshSaver(contender: string): Promise<SaverState & { drop(): Promise<void> }> {
  const database = await freshDatabase(admin, url!, "langgraph");
  if (contender === "ours") {
    const connection = await connectPostgres({ url: database.url });
    const saver = createPostgresCheckpointSaver({ db: connection.db });
    return { saver, close: () => connection.close(), drop: () => database.drop() };
  }
  const saver = PostgresSaver.fromConnString(database.url);
  saver.pool.on("error", sayPoolError);
  await saver.setup();
  return { saver, close: () => saver.end(), drop: () => database.drop() };
}
const putAll = async (saver: BaseCheckpointSaver, all: ReturnType<typeof steps>) => {
  for (const { config, checkpoint, metadata, versions } of all)
    await saver.put(config, checkpoint, metadata, versions);
};

const PUTS = 1_000;
const putSteps = steps(PUTS);
const writesOf = (i: number): [string, unknown][] => [
  ["messages", [message(i)]],
  ["step", i],
];
const readSteps = steps(READ_CHECKPOINTS);

/** One thread of 10,000 checkpoints for each side, made once (untimed): the read cases share it. */
const prepared = new Map<string, Promise<SaverState & { drop(): Promise<void> }>>();
const readState = (contender: string) => {
  let state = prepared.get(contender);
  if (!state) {
    state = freshSaver(contender).then(async (made) => {
      await putAll(made.saver, readSteps);
      return made;
    });
    prepared.set(contender, state);
  }
  return state;
};
const lastConfig = { configurable: { thread_id: THREAD, checkpoint_ns: "" } };
const GETS = 200;
const byId = (i: number) => ({
  configurable: {
    thread_id: THREAD,
    checkpoint_ns: "",
    checkpoint_id: readSteps[(i * 7919) % READ_CHECKPOINTS]!.checkpoint.id,
  },
});
const readCases = {
  getTupleLatest: async ({ saver }: SaverState) => {
    for (let i = 0; i < GETS; i++) await saver.getTuple(lastConfig);
  },
  getTupleById: async ({ saver }: SaverState) => {
    for (let i = 0; i < GETS; i++) await saver.getTuple(byId(i));
  },
  listAll: async ({ saver }: SaverState) => {
    let n = 0;
    for await (const _ of saver.list(lastConfig)) n++;
    if (n !== READ_CHECKPOINTS) throw new Error(`listed ${n} checkpoints`);
  },
  listPages: async ({ saver }: SaverState) => {
    for (let i = 0; i < 100; i++) for await (const _ of saver.list(lastConfig, { limit: 10 })) void _;
  },
};

const peer = "LangGraph's PostgresSaver";
const target = { kind: "speed" as const, min: 1.0 };
const writeCase = (
  name: string,
  count: number,
  work: (state: SaverState) => Promise<void>,
  prepare?: (state: SaverState) => Promise<void>,
) =>
  compare<SaverState & { drop(): Promise<void> }>({
    name,
    units: { count, label: "ops" },
    rounds: 5,
    freshState: prepare
      ? `a new database holding the ${PUTS.toLocaleString("en-US")} checkpoints the writes belong to`
      : "a new empty database, tables made",
    fresh: async ({ contender }) => {
      const state = await freshSaver(contender);
      await prepare?.(state);
      return state;
    },
    dispose: async (state) => {
      await state.close();
      await state.drop();
    },
    ours: work,
    against: [{ name: peer, kind: "peer", target, run: work }],
  });
const readCase = (name: string, count: number, work: (state: SaverState) => Promise<void>) =>
  compare<SaverState>({
    name,
    units: { count, label: "ops" },
    rounds: 5,
    freshState: `one thread of ${READ_CHECKPOINTS.toLocaleString("en-US")} checkpoints per side, made once (reads change nothing)`,
    fresh: ({ contender }) => readState(contender === "ours" ? "ours" : "peer"),
    ours: work,
    against: [{ name: peer, kind: "peer", target, run: work }],
  });

await runComparisons("LangGraph checkpoint savers on PostgreSQL", [
  writeCase(
    `put of ${PUTS.toLocaleString("en-US")} checkpoints on one thread (2 channels new each)`,
    PUTS,
    ({ saver }) => putAll(saver, putSteps),
  ),
  writeCase(
    `putWrites (2 writes of one task) on each of ${PUTS.toLocaleString("en-US")} checkpoints`,
    PUTS,
    async ({ saver }) => {
      for (const [i, { checkpoint }] of putSteps.entries()) {
        const config = {
          configurable: { thread_id: THREAD, checkpoint_ns: "", checkpoint_id: checkpoint.id },
        };
        await saver.putWrites(config, writesOf(i), `task-${i}`);
      }
    },
    ({ saver }) => putAll(saver, putSteps),
  ),
  readCase(`getTuple of the latest checkpoint × ${GETS}`, GETS, readCases.getTupleLatest),
  readCase(`getTuple by id × ${GETS}`, GETS, readCases.getTupleById),
  readCase(
    `list of all ${READ_CHECKPOINTS.toLocaleString("en-US")} checkpoints`,
    READ_CHECKPOINTS,
    readCases.listAll,
  ),
  readCase("list with limit 10 × 100", 1_000, readCases.listPages),
]);
for (const state of prepared.values()) {
  const made = await state;
  await made.close();
  await made.drop();
}
await admin.end();
