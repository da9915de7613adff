import { randomUUID } from "node:crypto";
import { type AnyComparison, compare, growth, type RunInfo, runComparisons } from "@stowage/bench-kit";
import {
  claudeScreenshotSession,
  codexScreenshotRollout,
  type ScreenshotSession,
  screenshotPng,
} from "./screenshot-transcripts.js";
import {
  type Backend,
  postgresBackend,
  type SessionKey,
  type StoreInstance,
  s3Backend,
} from "./store-backends.js";

/**
 * Issue 29's measure, side by side in one run: sessions with screenshots in our SessionStores
 * (images kept once in a blob store on the same backend) and in the Agent SDK's reference S3 and
 * PostgreSQL adapters, which store entries as they arrive. Stored bytes are counted once per
 * session and store; append (one batch per turn, as the SDK mirrors a turn) and load are timed by
 * runComparisons. Then how stored bytes and append time grow with the screenshots.
 */

const STORED_TARGET = 5;
const APPEND_TARGET = 1.0;
const LOAD_TARGET = 0.8;

interface RunState {
  instance: StoreInstance;
  key: SessionKey;
}

const newKey = (): SessionKey => ({ projectKey: "-workspace-app", sessionId: randomUUID() });
const MiB = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`;

async function appendSession(instance: StoreInstance, key: SessionKey, session: ScreenshotSession) {
  for (const batch of session.turns) await instance.store.append(key, batch);
}

/** What one session takes in ours and in the reference, counted on fresh instances. */
async function storedBytes(backend: Backend, session: ScreenshotSession) {
  const measure = async (instance: StoreInstance) => {
    const key = newKey();
    await appendSession(instance, key, session);
    const bytes = await instance.storedBytes(key);
    await instance.remove(key);
    return bytes;
  };
  return { ours: await measure(await backend.ours()), reference: await measure(await backend.reference()) };
}

const instanceFor = (backend: Backend, run: RunInfo) =>
  run.contender === "ours" ? backend.ours() : backend.reference();

/** Stored bytes, append and load of one session on one backend: ours against the reference adapter. */
function sessionCases(
  backend: Backend,
  label: string,
  session: ScreenshotSession,
  storedTarget: number | undefined,
): AnyComparison[] {
  const entries = session.turns.flat().length;
  const reference = `Anthropic's reference ${backend.name === "PostgreSQL" ? "PostgresSessionStore" : "S3SessionStore"}`;
  const notes: string[] = [];
  let storedMet = true;
  const dispose = ({ instance, key }: RunState) => instance.remove(key);
  const written = new Map<string, RunState>();
  return [
    compare<RunState>({
      name: `${label} on ${backend.name}: append, one batch per turn (${session.turns.length} batches, ${MiB(session.jsonBytes)} of JSON)`,
      units: { count: entries, label: "ops" },
      rounds: 5,
      freshState: "a new store instance (its own prefix or namespace, no blob stored yet) and session key",
      notes,
      setup: async () => {
        const stored = await storedBytes(backend, session);
        const ratio = stored.reference / stored.ours;
        storedMet = storedTarget === undefined || ratio >= storedTarget;
        notes.push(
          `stored: ours ${MiB(stored.ours)} vs reference ${MiB(stored.reference)}: ${ratio.toFixed(2)}x fewer bytes` +
            (storedTarget === undefined
              ? "   (no target)"
              : `   target >= ${storedTarget}x   ${storedMet ? "met" : "MISSED"}`),
        );
      },
      cleanup: () => {
        if (!storedMet) process.exitCode = 1;
      },
      fresh: async (run) => ({ instance: await instanceFor(backend, run), key: newKey() }),
      dispose,
      ours: ({ instance, key }) => appendSession(instance, key, session),
      against: [
        {
          name: reference,
          kind: "peer",
          note: "stores every entry as it arrives, images inline",
          target: { kind: "speed", min: APPEND_TARGET },
          run: ({ instance, key }) => appendSession(instance, key, session),
        },
      ],
    }),
    compare<RunState>({
      name: `${label} on ${backend.name}: load of the whole transcript (${entries} entries)`,
      units: { count: entries, label: "ops" },
      rounds: 5,
      freshState: "the session appended once per store before the rounds (a load changes nothing)",
      setup: async () => {
        for (const contender of ["ours", reference]) {
          const state = { instance: await instanceFor(backend, { contender, round: -1 }), key: newKey() };
          await appendSession(state.instance, state.key, session);
          written.set(contender, state);
        }
      },
      cleanup: async () => {
        for (const state of written.values()) await dispose(state);
        written.clear();
      },
      fresh: (run) => written.get(run.contender)!,
      ours: async ({ instance, key }) => expectEntries(await instance.store.load(key), entries),
      against: [
        {
          name: reference,
          kind: "peer",
          target: { kind: "speed", min: LOAD_TARGET },
          run: async ({ instance, key }) => expectEntries(await instance.store.load(key), entries),
        },
      ],
    }),
  ];
}

function expectEntries(loaded: unknown[] | null, count: number) {
  if (loaded?.length !== count) throw new Error(`loaded ${loaded?.length} entries, expected ${count}`);
}

/** Append cost and stored bytes as the distinct screenshots grow: one read of each, one per turn. */
function screenshotGrowth(backend: Backend, pngs: readonly Buffer[]): AnyComparison[] {
  return growth<RunState>({
    name: `Claude Code session on ${backend.name}, one distinct screenshot read per turn: append`,
    sizes: [1, 10, 100],
    unit: "screenshot",
    make: (size) => {
      const session = claudeScreenshotSession(randomUUID(), size, pngs.slice(0, size));
      const notes: string[] = [];
      return {
        name: `${size} screenshot${size === 1 ? "" : "s"} on ${backend.name}: append (${MiB(session.jsonBytes)} of JSON)`,
        rounds: 3,
        warmup: false,
        freshState: "a new store instance and session key",
        notes,
        setup: async () => {
          const stored = await storedBytes(backend, session);
          notes.push(
            `stored: ours ${MiB(stored.ours)} vs reference ${MiB(stored.reference)}: ${(stored.reference / stored.ours).toFixed(2)}x fewer bytes`,
          );
        },
        fresh: async (run) => ({ instance: await instanceFor(backend, run), key: newKey() }),
        dispose: ({ instance, key }) => instance.remove(key),
        ours: ({ instance, key }) => appendSession(instance, key, session),
        against: [
          {
            name: "reference adapter",
            kind: "peer",
            run: ({ instance, key }) => appendSession(instance, key, session),
          },
        ],
      };
    },
  });
}

const backends = (await Promise.all([s3Backend(), postgresBackend()])).filter(
  (backend): backend is Backend => backend !== undefined,
);
if (backends.length > 0) {
  const start = performance.now();
  const pngs = Array.from({ length: 100 }, (_, i) => screenshotPng(i + 1));
  const twenty = pngs.slice(0, 20);
  const claude = claudeScreenshotSession(randomUUID(), 40, twenty);
  const codex = codexScreenshotRollout(randomUUID(), 40, twenty);
  console.log(
    `\nscreenshot sessions (${(performance.now() - start).toFixed(0)} ms to draw ${pngs.length} PNGs of 1280x800, ${MiB(pngs.reduce((sum, png) => sum + png.byteLength, 0) / pngs.length)} each on average):` +
      `\n  Claude Code: 40 turns, each reading a screenshot with Read (20 distinct PNGs, ${MiB(claude.distinctPngBytes)}, each read twice; every read written twice), ${MiB(claude.jsonBytes)} of JSON` +
      `\n  Codex: 40 turns, 20 attaching a distinct screenshot (${MiB(codex.distinctPngBytes)}; each in input_image and user_message.images), ${MiB(codex.jsonBytes)} of JSON`,
  );
  for (const backend of backends) console.log(`  peer on ${backend.name}: ${backend.peerOrigin}`);
  try {
    await runComparisons("@stowage/sessions: each byte stored once (issue 29)", [
      ...backends.flatMap((backend) => [
        ...sessionCases(backend, "Claude Code screenshot session", claude, STORED_TARGET),
        ...sessionCases(backend, "Codex rollout with user_message.images", codex, undefined),
      ]),
      ...screenshotGrowth(backends[0]!, pngs),
    ]);
  } finally {
    for (const backend of backends) await backend.close();
  }
}
