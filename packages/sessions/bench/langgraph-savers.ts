import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { RunnableConfig } from "@langchain/core/runnables";
import type {
  BaseCheckpointSaver,
  ChannelVersions,
  Checkpoint,
  CheckpointMetadata,
} from "@langchain/langgraph-checkpoint";
import { compare, installPeers, runComparisons, scratchSpace } from "@stowage/bench-kit";
import { createFsObjectStore } from "@stowage/storage-fs";
import { createObjectCheckpointSaver } from "../src/langgraph/index.js";

// The ObjectStore checkpoint saver on the file system against LangGraph's SqliteSaver (one file,
// better-sqlite3), printed side by side without a target: put, putWrites, getTuple and list. The
// peer is installed from npm at bench time, never a dependency; better-sqlite3's native binding is
// built there once (npm installs peers without scripts).
const peers = await installPeers({ "@langchain/langgraph-checkpoint-sqlite": "^1.0.4" });
const sqliteDir = join(peers.directory, "node_modules", "better-sqlite3");
if (!existsSync(join(sqliteDir, "build", "Release", "better_sqlite3.node"))) {
  console.log("building better-sqlite3's native binding for the SqliteSaver peer (untimed)…");
  execFileSync("npm", ["rebuild", "better-sqlite3", "--loglevel=error"], {
    cwd: peers.directory,
    stdio: "inherit",
  });
}
console.log(peers.describe());
type SqliteSaverClass = { fromConnString(path: string): BaseCheckpointSaver };
const { SqliteSaver } = await peers.load<{ SqliteSaver: SqliteSaverClass }>(
  "@langchain/langgraph-checkpoint-sqlite",
);
const scratch = await scratchSpace("langgraph-savers");

const THREAD = "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10";
const message = (step: number) => ({
  lc: 1,
  type: "constructor",
  id: ["langchain_core", "messages", "AIMessage"],
  kwargs: {
    content: `step ${step}: ${"the model's answer, a few sentences long. ".repeat(6)}`,
    id: `msg_${step}`,
  },
});
interface Step {
  config: RunnableConfig;
  checkpoint: Checkpoint;
  metadata: CheckpointMetadata;
  versions: ChannelVersions;
}
/** A graph's steps as LangGraph writes them: the messages channel and the step counter change. */
function steps(count: number): Step[] {
  const all: Step[] = [];
  for (let index = 0; index < count; index++) {
    const parent = all.at(-1)?.checkpoint.id;
    const versions = { messages: index + 1, step: index + 1 };
    all.push({
      config: {
        configurable: { thread_id: THREAD, checkpoint_ns: "", ...(parent ? { checkpoint_id: parent } : {}) },
      },
      checkpoint: {
        v: 4,
        id: `1f0b${index.toString(16).padStart(8, "0")}-0000-6000-8000-000000000000`,
        ts: new Date(Date.UTC(2026, 10, 29, 0, 0, index)).toISOString(),
        channel_values: { messages: [message(index)], step: index },
        channel_versions: versions,
        versions_seen: { agent: { step: index } },
      },
      metadata: { source: "loop", step: index, parents: {} },
      versions,
    });
  }
  return all;
}
const putAll = async (saver: BaseCheckpointSaver, all: Step[]) => {
  for (const { config, checkpoint, metadata, versions } of all)
    await saver.put(config, checkpoint, metadata, versions);
};

interface SaverState {
  saver: BaseCheckpointSaver;
  dir: string;
}
async function freshSaver(contender: string): Promise<SaverState> {
  const dir = await scratch.directory("saver");
  const saver =
    contender === "ours"
      ? createObjectCheckpointSaver({ store: createFsObjectStore({ root: dir }) })
      : SqliteSaver.fromConnString(join(dir, "checkpoints.db"));
  return { saver, dir };
}

const PUTS = 500;
const READ_CHECKPOINTS = 2_000;
const GETS = 200;
const putSteps = steps(PUTS);
const readSteps = steps(READ_CHECKPOINTS);
const latest = { configurable: { thread_id: THREAD, checkpoint_ns: "" } };
const prepared = new Map<string, Promise<SaverState>>();
const readState = (side: string) => {
  let state = prepared.get(side);
  if (!state) {
    state = freshSaver(side).then(async (made) => {
      await putAll(made.saver, readSteps);
      return made;
    });
    prepared.set(side, state);
  }
  return state;
};
const peer = "LangGraph's SqliteSaver";
const note =
  "one SQLite file, better-sqlite3's defaults (rollback journal, synchronous FULL); ours fsyncs every record";
const writeCase = (
  name: string,
  count: number,
  work: (state: SaverState) => Promise<void>,
  prepare?: (state: SaverState) => Promise<void>,
) =>
  compare<SaverState>({
    name,
    units: { count, label: "ops" },
    rounds: 5,
    freshState: prepare
      ? `a new directory holding the ${PUTS} checkpoints written to`
      : "a new empty directory",
    fresh: async ({ contender }) => {
      const state = await freshSaver(contender);
      await prepare?.(state);
      return state;
    },
    dispose: ({ dir }) => scratch.remove(dir),
    ours: work,
    against: [{ name: peer, kind: "peer", note, run: work }],
  });
const readCase = (name: string, count: number, work: (state: SaverState) => Promise<void>) =>
  compare<SaverState>({
    name,
    units: { count, label: "ops" },
    rounds: 5,
    freshState: `one thread of ${READ_CHECKPOINTS.toLocaleString("en-US")} checkpoints per side, made once (reads change nothing)`,
    fresh: ({ contender }) => readState(contender === "ours" ? "ours" : "peer"),
    ours: work,
    against: [{ name: peer, kind: "peer", note, run: work }],
  });

await runComparisons("LangGraph checkpoint savers on one machine's disk: fs vs SQLite", [
  writeCase(`put of ${PUTS} checkpoints on one thread (2 channels new each)`, PUTS, ({ saver }) =>
    putAll(saver, putSteps),
  ),
  writeCase(
    `putWrites (2 writes of one task) on each of ${PUTS} checkpoints`,
    PUTS,
    async ({ saver }) => {
      for (const [i, { checkpoint }] of putSteps.entries()) {
        const config = {
          configurable: { thread_id: THREAD, checkpoint_ns: "", checkpoint_id: checkpoint.id },
        };
        await saver.putWrites(
          config,
          [
            ["messages", [message(i)]],
            ["step", i],
          ],
          `task-${i}`,
        );
      }
    },
    ({ saver }) => putAll(saver, putSteps),
  ),
  readCase(`getTuple of the latest checkpoint × ${GETS}`, GETS, async ({ saver }) => {
    for (let i = 0; i < GETS; i++) await saver.getTuple(latest);
  }),
  readCase(
    `list of all ${READ_CHECKPOINTS.toLocaleString("en-US")} checkpoints`,
    READ_CHECKPOINTS,
    async ({ saver }) => {
      let n = 0;
      for await (const _ of saver.list(latest)) n++;
      if (n !== READ_CHECKPOINTS) throw new Error(`listed ${n} checkpoints`);
    },
  ),
]);
await scratch.dispose();
