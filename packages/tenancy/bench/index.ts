import { randomBytes, randomUUID } from "node:crypto";
import { mkdir, realpath } from "node:fs/promises";
import { join } from "node:path";
import { scratchSpace } from "@stowage/bench-kit";
import { createMemoryNotifier } from "@stowage/core";
import {
  captureSession,
  createMemorySessionBlobRepository,
  createObjectSessionStore,
  restoreSession,
  type SessionStoreEntry,
} from "@stowage/sessions";
import {
  realisticSessionTree,
  realisticTranscriptEntries,
  writeSessionTree,
} from "@stowage/sessions/testing";
import { createFsObjectStore } from "@stowage/storage-fs";
import { createStowage, DEFAULT_STORES } from "../src/index.js";

// Encryption at rest on against off, the same work on the same kind of store in the same run:
// a SessionStore's append and load (every part sealed, then opened), and a session's capture
// into its stored sessions and its restore from them (the archive sealed, then opened). Issue 30
// asks for at most 1.3x the time.
const scratch = await scratchSpace("tenancy-encryption");
const key = randomBytes(32).toString("base64");
const alice = { kind: "user", id: "alice" } as const;

/** A deployment on a new directory, sealed or not. */
async function deployment(sealed: boolean) {
  const dir = await scratch.directory(sealed ? "sealed" : "clear");
  await mkdir(join(dir, "agent-sessions"));
  const stowage = createStowage({
    shared: createFsObjectStore({ root: join(dir, "shared") }),
    notifier: createMemoryNotifier(),
    agentSessionsDir: join(dir, "agent-sessions"),
    sessionBlobs: createMemorySessionBlobRepository(),
    stores: { sessionBlobs: DEFAULT_STORES.sessionBlobs },
    ...(sealed ? { encryption: { env: { STOWAGE_ENCRYPTION_KEY: key } } } : {}),
  });
  // The principal's data keys exist once a deployment has run: made here, not timed.
  await stowage.shared.put("bench/user/alice/warm", new Uint8Array(1));
  await stowage.blobs.put(new Uint8Array(1));
  return { dir, stowage };
}

// 10,000 transcript lines shaped like the SDK mirrors them, appended in batches of 100.
const ENTRIES = 10_000;
const lines = realisticTranscriptEntries(randomUUID()).filter(
  (entry) => JSON.stringify(entry).length <= 4096,
);
const entries: SessionStoreEntry[] = Array.from({ length: ENTRIES }, (_, i) => ({
  ...lines[i % lines.length]!,
  uuid: randomUUID(),
}));
const batches = Array.from({ length: ENTRIES / 100 }, (_, i) => entries.slice(i * 100, (i + 1) * 100));
const sessionKey = { projectKey: "-workspace-app", sessionId: randomUUID() };
// In alice's namespace, as the table's stores keep it: sealed under her data key.
const sessionStoreOf = (stowage: Awaited<ReturnType<typeof deployment>>["stowage"]) =>
  createObjectSessionStore({ store: stowage.shared, prefix: "agents-sessions/user/alice" });

// A 12 MB Claude Code session: a 9.5 MB transcript, two subagents, tool results, screenshots.
const treeBase = await scratch.directory("tree");
await mkdir(join(treeBase, "workspace"));
const cwd = await realpath(join(treeBase, "workspace"));
const configDir = join(treeBase, ".claude");
const sessionId = "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10";
await writeSessionTree({
  configDir,
  cwd,
  sessionId,
  files: realisticSessionTree({
    sessionId,
    cwd,
    mainBytes: 9_500_000,
    subagentBytes: 900_000,
    screenshotEvery: 30,
  }),
});
const captured = await captureSession({ configDir, cwd, sessionId });
const mib = (captured.rawSizeBytes / 1024 / 1024).toFixed(1);

type State = Awaited<ReturnType<typeof deployment>>;

interface CpuCase {
  name: string;
  rounds: number;
  /** Untimed: a new deployment, sealed or not, with what the timed run needs. */
  fresh(sealed: boolean): Promise<State>;
  run(state: State): Promise<void>;
}

/**
 * CPU time (user + system, `process.cpuUsage`) of each side, not wall time: the machine is shared
 * and loaded, and the seal costs CPU, not I/O (both sides write the same number of bytes, give or
 * take 16 per 64 KiB). Rounds interleaved, the side that goes first alternating; fresh state
 * untimed before each run. The ratio is encrypted / clear, median over the rounds.
 */
async function cpuComparison(cases: CpuCase[]): Promise<boolean> {
  console.log(
    "@stowage/tenancy encryption at rest: CPU time (user + system), encryption on vs off, same run",
  );
  let met = true;
  for (const bench of cases) {
    const times: Record<"on" | "off", number[]> = { on: [], off: [] };
    const ratios: number[] = [];
    for (let round = 0; round < bench.rounds; round++) {
      const order = round % 2 === 0 ? (["on", "off"] as const) : (["off", "on"] as const);
      const spent: Partial<Record<"on" | "off", number>> = {};
      for (const side of order) {
        const state = await bench.fresh(side === "on");
        const before = process.cpuUsage();
        await bench.run(state);
        const used = process.cpuUsage(before);
        spent[side] = (used.user + used.system) / 1000;
        times[side].push(spent[side]);
        await scratch.remove(state.dir);
      }
      ratios.push(spent.on! / spent.off!);
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const ratio = median(ratios);
    met &&= ratio <= 1.3;
    console.log(`- ${bench.name}`);
    console.log(
      `    encryption on ${median(times.on).toFixed(0)} ms CPU, off ${median(times.off).toFixed(0)} ms CPU: ratio ${ratio.toFixed(2)}x (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}) over ${bench.rounds} rounds; target <= 1.3x: ${ratio <= 1.3 ? "met" : "MISSED"}`,
    );
  }
  return met;
}

const appendAll = async (stowage: State["stowage"]) => {
  const store = sessionStoreOf(stowage);
  for (const batch of batches) await store.append(sessionKey, batch);
};
const capture = async ({ stowage }: State) => {
  const archive = await captureSession({ configDir, cwd, sessionId });
  await stowage.tenant(alice).sessionBlobs.create({ ...archive, requestId: "req", agentType: "claude-code" });
};

const met = await cpuComparison([
  {
    name: `SessionStore append of ${ENTRIES.toLocaleString("en-US")} entries in batches of 100 (one store, as a process keeps it)`,
    rounds: 7,
    fresh: deployment,
    run: ({ stowage }) => appendAll(stowage),
  },
  {
    name: `SessionStore load of those ${ENTRIES.toLocaleString("en-US")} entries (compacted parts)`,
    rounds: 7,
    fresh: async (sealed) => {
      const state = await deployment(sealed);
      await appendAll(state.stowage);
      return state;
    },
    run: async ({ stowage }) => {
      if ((await sessionStoreOf(stowage).load(sessionKey))?.length !== ENTRIES) throw new Error("short load");
    },
  },
  {
    name: `capture of the ${mib} MiB Claude Code session into stored sessions`,
    rounds: 5,
    fresh: deployment,
    run: capture,
  },
  {
    name: `restore of the ${mib} MiB session from stored sessions`,
    rounds: 5,
    fresh: async (sealed) => {
      const state = await deployment(sealed);
      await capture(state);
      return state;
    },
    run: async ({ stowage, dir }) => {
      const record = await stowage.tenant(alice).sessionBlobs.getBySessionId(sessionId);
      await restoreSession(record!, { configDir: join(dir, "restored", ".claude"), cwd });
    },
  },
]);
await scratch.dispose();
if (!met) process.exitCode = 1;
