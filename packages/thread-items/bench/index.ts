import { Buffer } from "node:buffer";
import { type BenchCase, runBenchmarks } from "@stowage/bench-kit";
import {
  convertTranscript,
  createClaudeAgentSdkAdapter,
  createClaudeCodeTranscriptConverter,
  createCodexRolloutConverter,
  createPiSessionConverter,
  fitToBudget,
  type ThreadItem,
  toolResultItem,
} from "@stowage/thread-items";
import { DEFAULT_BUDGET_BYTES, measureThreadItem } from "../src/budget/fit-to-budget.js";
import { longClaudeCodeTranscript, longCodexRollout } from "../test/fixture-generators/fixtures.js";
import { agentSdkMessages } from "./current-formats/agent-sdk.js";
import { claudeCode21Transcript } from "./current-formats/claude-code-2-1.js";
import { codex125Rollout } from "./current-formats/codex-0-125.js";
import { piSessionFile } from "./current-formats/pi-session.js";
import { bulkPostCase, durablePostCase, readBackCase } from "./feed-cases.js";

const OUTPUT_BYTES = 100 * 1024 * 1024;
const LOCAL_LOG_PATH = "session_agent_harness-ses_01J/threads/my-feature-x/logs/thread.log";
const TRANSCRIPT_ITEMS = 10_000;

/** `bytes` bytes of a build log made of `line` repeated (a flat string, as a tool's output would be). */
function logOutput(line: string, bytes: number): string {
  const lineBytes = Buffer.byteLength(line);
  const text = line.repeat(Math.ceil(bytes / lineBytes));
  // Cut on a line boundary near the target, then flatten the rope `repeat` builds.
  return Buffer.from(text.slice(0, Math.floor(bytes / lineBytes) * line.length)).toString();
}

function fitCase(name: string, line: string): BenchCase {
  // Made for this case and dropped after it: 100 MiB kept through the whole run made every later
  // case pay for collecting a larger heap.
  let output = "";
  let item: ThreadItem | undefined;
  return {
    name,
    target: { kind: "time", max: 1.5 },
    units: { count: OUTPUT_BYTES, label: "B" },
    prepare: () => {
      if (item) return;
      output = logOutput(line, OUTPUT_BYTES);
      item = toolResultItem({ invocationId: "toolu_01Bench", output });
    },
    ours: async () => {
      const fitted = fitToBudget(item!, { localLogPath: LOCAL_LOG_PATH });
      if (measureThreadItem(fitted) > DEFAULT_BUDGET_BYTES) throw new Error("fitted item is over the budget");
    },
    baseline: async () => {
      Buffer.from(output);
      JSON.stringify(item);
    },
    cleanup: () => {
      output = "";
      item = undefined;
    },
  };
}

/**
 * A transcript with at least {@link TRANSCRIPT_ITEMS} items: sized from a short one's items per
 * turn, then grown until its conversion yields that many.
 */
function transcriptOf(build: (turns: number) => string, convert: (text: string) => { items: unknown[] }) {
  const sample = 40;
  const perTurn = convert(build(sample)).items.length / sample;
  for (let turns = Math.ceil(TRANSCRIPT_ITEMS / perTurn); ; turns += 4) {
    const text = build(turns);
    const count = convert(text).items.length;
    if (count >= TRANSCRIPT_ITEMS) return { text, count };
  }
}

function parseEveryLine(text: string): unknown[] {
  const records: unknown[] = [];
  for (const line of text.split("\n")) if (line !== "") records.push(JSON.parse(line));
  return records;
}

function convertCase(
  name: string,
  build: (turns: number) => string,
  convert: (text: string) => { items: unknown[] },
): BenchCase {
  const { text, count } = transcriptOf(build, convert);
  return {
    name: `${name} (${count.toLocaleString("en-US")} items, ${text.split("\n").length.toLocaleString("en-US")} lines, ${(text.length / 1024 / 1024).toFixed(1)} MiB)`,
    target: { kind: "time", max: 2 },
    units: { count, label: "ops" },
    rounds: 15,
    ours: async () => convert(text),
    baseline: async () => parseEveryLine(text),
  };
}

/** The Agent SDK adapter fed a stream's messages, each parsed from its line as it would arrive. */
function convertSdkMessages(text: string): { items: ThreadItem[] } {
  const adapter = createClaudeAgentSdkAdapter();
  const items: ThreadItem[] = [];
  for (const line of text.split("\n")) if (line !== "") items.push(...adapter.push(JSON.parse(line)));
  items.push(...adapter.end());
  return { items };
}

await runBenchmarks("@stowage/thread-items", [
  fitCase(
    "fitToBudget: tool_result with 100 MiB of ASCII output vs Buffer.from(output) + JSON.stringify(item)",
    "npm info run esbuild@0.21.5 postinstall node_modules/esbuild node install.js\n",
  ),
  fitCase(
    "fitToBudget: tool_result with 100 MiB of non-ASCII output vs Buffer.from(output) + JSON.stringify(item)",
    " ✓ test/parser.test.ts > parseLine > strips known prefixes — 3 ms\n",
  ),
  convertCase(
    "Claude Code 2.0 transcript (generated) → thread items vs JSON.parse of every line",
    longClaudeCodeTranscript,
    (text) => convertTranscript(text, createClaudeCodeTranscriptConverter()),
  ),
  convertCase(
    "Codex 0.46 rollout (generated) → thread items vs JSON.parse of every line",
    longCodexRollout,
    (text) => convertTranscript(text, createCodexRolloutConverter()),
  ),
  // The formats as current versions write them (bench/current-formats): tool results with
  // toolUseResult, progress lines and IDE blocks; Codex headers, truncation notes, token_count.
  convertCase(
    "Claude Code 2.1 transcript → thread items vs JSON.parse of every line",
    claudeCode21Transcript,
    (text) => convertTranscript(text, createClaudeCodeTranscriptConverter()),
  ),
  convertCase("Codex 0.125 rollout → thread items vs JSON.parse of every line", codex125Rollout, (text) =>
    convertTranscript(text, createCodexRolloutConverter()),
  ),
  convertCase("pi session (v3) → thread items vs JSON.parse of every line", piSessionFile, (text) =>
    convertTranscript(text, createPiSessionConverter()),
  ),
  convertCase(
    "Agent SDK 0.3 messages → thread items vs JSON.parse of every line",
    agentSdkMessages,
    convertSdkMessages,
  ),
  await durablePostCase(),
  await bulkPostCase(),
  await readBackCase(),
]);
