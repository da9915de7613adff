import { createHash } from "node:crypto";
import { runBenchmarks } from "@stowage/bench-kit";
import { createBlobStore } from "@stowage/blob-store";
import { createMemoryObjectStore, type Logger, type ObjectStore } from "@stowage/core";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import {
  buildBootstrapContext,
  buildHotState,
  type ContentRegistry,
  countTokensExact,
  createContentRegistry,
  type HotState,
} from "../src/index.js";
import { hexIds, mixedText } from "../test/corpora.js";
import { tokenCountCases } from "./token-count-cases.js";

const quiet: Logger = { warn() {} };
const ids = hexIds(20, "bench");

// At the limits: 20 index entries and lists, just under 1,000 o200k tokens.
const maxedState: HotState = {
  session_id: "sess-01JQ8Z2K7Y",
  session_key: "agent:main:sess-01JQ8Z2K7Y",
  run_id: "run-42",
  objective: "Migrate session storage to content-addressed blobs",
  current_plan_id: "plan-7",
  risk_level: "medium",
  artifact_index: ids.map((artifact_id, i) => ({
    artifact_id,
    type: i % 2 ? ("code" as const) : ("doc" as const),
  })),
};

// Over budget: summaries, labels, decisions and questions that must be shed to fit.
const overState: HotState = {
  ...maxedState,
  accepted_decisions: Array.from({ length: 30 }, (_, i) => `decision ${i}: keep records beside content`),
  open_questions: Array.from({ length: 10 }, (_, i) => `question ${i}: shard by two or three hex digits?`),
  artifact_index: ids.map((artifact_id, i) => ({
    artifact_id,
    type: "doc" as const,
    label: `docs/design-${i}.md`,
    summary: `Design notes ${i}: trade-offs of the sharded layout and crash recovery.`,
  })),
};

const maxedTokens = buildHotState(maxedState, { logger: quiet });
if (maxedTokens.truncated) throw new Error("bench setup: the maxed state should fit without shedding");
const over = buildHotState(overState, { logger: quiet });

// A 1 MiB bootstrap set: 16 workspace files of 64 KiB, each over the 8,000-character threshold.
const bootstrapFiles = Array.from({ length: 16 }, (_, i) => ({
  path: `docs/file-${i}.md`,
  content: mixedText(64 * 1024 + i),
}));
const bootstrapBytes = bootstrapFiles.reduce((sum, file) => sum + Buffer.byteLength(file.content), 0);
// Each timed run stores the set this many times, into fresh stores, so that one sample lasts long
// enough to average out a busy machine.
const BOOTSTRAP_SETS_PER_RUN = 8;
let registries: ContentRegistry[] = [];
let rawStores: ObjectStore[] = [];
const freshStores = () => {
  // Content in a blob store and records beside it, in one memory store, as an app lays them out.
  registries = Array.from({ length: BOOTSTRAP_SETS_PER_RUN }, () => {
    const store = createMemoryObjectStore();
    const content = createBlobStore({ store, layout: "sharded", prefix: "blobs/" });
    return createContentRegistry({ content, records: store, prefix: "content-refs/", logger: quiet });
  });
  rawStores = Array.from({ length: BOOTSTRAP_SETS_PER_RUN }, () => createMemoryObjectStore());
};

const countingText = mixedText(512 * 1024);

await runBenchmarks("@stowage/hot-state", [
  {
    name: `buildHotState, maxed state that fits (20 entries, ${maxedTokens.tokens} tokens) vs JSON.stringify + o200k count`,
    target: { kind: "time", max: 1.5 },
    units: { count: 1000, label: "ops" },
    rounds: 15,
    ours: async () => {
      for (let i = 0; i < 1000; i++) buildHotState(maxedState, { logger: quiet });
    },
    baseline: async () => {
      for (let i = 0; i < 1000; i++) countTokens(JSON.stringify(maxedState));
    },
  },
  {
    name: `buildHotState, over budget (${countTokens(JSON.stringify(overState))} → ${over.tokens} tokens, ${over.shed.length} items shed) vs one count of the input`,
    // Shedding runs a binary search per step: about a dozen counts of ever smaller JSON.
    target: { kind: "time", max: 12 },
    units: { count: 200, label: "ops" },
    rounds: 15,
    ours: async () => {
      for (let i = 0; i < 200; i++) buildHotState(overState, { logger: quiet });
    },
    baseline: async () => {
      for (let i = 0; i < 200; i++) countTokens(JSON.stringify(overState));
    },
  },
  {
    name: "buildBootstrapContext, 1 MiB set of 16 files stored as refs vs sha256 + put of content and record",
    // Beyond the baseline's work it validates each file, its path and its record, checks the text
    // is well-formed, and renders the excerpts and the prompt text.
    target: { kind: "time", max: 2 },
    units: { count: bootstrapBytes * BOOTSTRAP_SETS_PER_RUN, label: "B" },
    rounds: 15,
    prepare: freshStores,
    ours: async () => {
      for (const registry of registries) await buildBootstrapContext(bootstrapFiles, { registry });
    },
    baseline: async () => {
      for (const rawStore of rawStores) {
        for (const file of bootstrapFiles) {
          const bytes = new TextEncoder().encode(file.content);
          const hash = createHash("sha256").update(bytes).digest("hex");
          await rawStore.put(`blobs/${hash.slice(0, 2)}/${hash}`, bytes);
          const record = {
            artifact_id: hash,
            size_bytes: bytes.byteLength,
            created_at: new Date().toISOString(),
          };
          await rawStore.put(
            `content-refs/${hash.slice(0, 2)}/${hash}.json`,
            new TextEncoder().encode(JSON.stringify(record)),
          );
        }
      }
    },
  },
  {
    name: "countTokensExact vs gpt-tokenizer countTokens called directly (512 KiB mixed text)",
    // The same counts plus hot-state's guard: a scan for runs over 1,024 characters (about 4 ms per
    // 512 KiB) and emptying the library's merge cache before it fills (it re-merges after).
    target: { kind: "speed", min: 0.8 },
    rounds: 15,
    units: { count: Buffer.byteLength(countingText), label: "B" },
    ours: async () => countTokensExact(countingText),
    baseline: async () => countTokens(countingText),
  },
  ...tokenCountCases(countingText),
]);
