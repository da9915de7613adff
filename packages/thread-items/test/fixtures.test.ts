import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { DEFAULT_BUDGET_BYTES, measureThreadItem } from "../src/budget/fit-to-budget.js";
import {
  type ConversionResult,
  createClaudeAgentSdkAdapter,
  fitToBudget,
  foldToolPairs,
  isThreadItem,
  type ThreadItem,
} from "../src/index.js";
import { buildFixtures, type Fixture, LONG_OUTPUT_BYTES } from "./fixture-generators/fixtures.js";
import { convertClaudeCodeTranscript, convertCodexRollout } from "./support/convert-whole.js";

const fixtures = buildFixtures();
const fixture = (file: string) => fixtures.find((candidate) => candidate.file === file)!;
const readFixture = (file: string) => readFile(new URL(`./fixtures/${file}`, import.meta.url));

function convertSdkJsonl(bytes: Uint8Array): ConversionResult {
  const adapter = createClaudeAgentSdkAdapter();
  const items: ThreadItem[] = [];
  for (const line of new TextDecoder().decode(bytes).split("\n")) {
    if (line !== "") items.push(...adapter.push(JSON.parse(line)));
  }
  items.push(...adapter.end());
  return { items, problems: [...adapter.problems], sessionId: adapter.sessionId };
}

const CONVERTERS: Record<string, (bytes: Uint8Array) => ConversionResult> = {
  "claude-code-session.jsonl": (bytes) => convertClaudeCodeTranscript(bytes),
  "claude-agent-sdk-stream.jsonl": convertSdkJsonl,
  "codex-rollout.jsonl": (bytes) => convertCodexRollout(bytes),
};

const ofType = (items: ThreadItem[], type: string | undefined) =>
  items.filter((item) => item.metadata?.type === type);
const allText = (item: ThreadItem) => JSON.stringify(item);

describe("committed fixtures", () => {
  it.each(fixtures.map((each) => [each.file, each] as [string, Fixture]))(
    "%s is what its generator writes",
    async (file, built) => {
      expect((await readFixture(file)).toString("utf8")).toBe(built.jsonl);
      expect(built.jsonl.split("\n").filter((line) => line !== "").length).toBeGreaterThanOrEqual(300);
    },
  );
});

describe.each(Object.keys(CONVERTERS))("converting %s", (file) => {
  const { expected } = fixture(file);
  const load = async () => CONVERTERS[file]!(await readFixture(file));

  it("yields only valid items, reports exactly the damaged lines, and finds the session id", async () => {
    const result = await load();
    expect(result.items.length).toBeGreaterThan(250);
    for (const item of result.items)
      expect(isThreadItem(item), JSON.stringify(item).slice(0, 200)).toBe(true);
    expect(result.problems.map((problem) => problem.line)).toEqual(expected.problemLines);
    expect(result.sessionId).toBe(expected.sessionId);
  });

  it("reports every turn_end with the source's tokens (cached + uncached) and duration", async () => {
    const turns = ofType((await load()).items, "turn_end").map(
      (item) => (item.metadata as { stats: unknown }).stats,
    );
    expect(turns).toEqual(expected.turns);
  });

  it("pairs every tool call with its result", async () => {
    const { items } = await load();
    expect(ofType(items, "tool_call")).toHaveLength(expected.toolCalls);
    expect(ofType(items, "tool_result")).toHaveLength(expected.toolResults);
    const pairs = foldToolPairs(items).filter((entry) => entry.kind === "tool");
    expect(pairs).toHaveLength(expected.toolCalls);
    for (const pair of pairs) expect(pair.call && pair.result && pair.name).toBeTruthy();
  });

  it("shows images as placeholders, never as base64", async () => {
    const { items } = await load();
    const placeholders =
      items
        .map(allText)
        .join("\n")
        .match(/\[image: image\/png, [\d,]+ bytes\]/g) ?? [];
    expect(placeholders.length).toBeGreaterThanOrEqual(expected.images);
    expect(items.map(allText).join("\n")).not.toContain("iVBORw0KGgo");
  });

  it("keeps the long tool output whole, and it fits the budget once fitted", async () => {
    const { items } = await load();
    const long = ofType(items, "tool_result").filter(
      (item) => measureThreadItem(item) > DEFAULT_BUDGET_BYTES,
    );
    expect(long).toHaveLength(1);
    expect((long[0]!.metadata as { tool: { output: string } }).tool.output.length).toBeGreaterThanOrEqual(
      LONG_OUTPUT_BYTES,
    );
    expect(long[0]!.content[0]!.text).toMatch(/^→ npm verbose cli .* \(\d+ lines\)$/);
    const fitted = fitToBudget(long[0]!, { localLogPath: "job/threads/main/logs/thread.log" });
    expect(measureThreadItem(fitted)).toBeLessThanOrEqual(DEFAULT_BUDGET_BYTES);
    expect(fitted.metadata).toMatchObject({ truncated: true, truncated_fields: ["tool.output"] });
  });
});

describe("fixture briefs", () => {
  it("Claude Code: prompts, thinking, tool calls and results read as the thread shows them", async () => {
    const { items } = convertClaudeCodeTranscript(await readFixture("claude-code-session.jsonl"));
    const briefs = items.map((item) => item.content[0]!.text);
    const posts = items.filter((item) => item.metadata === undefined).map((item) => item.content[0]!.text);
    expect(posts[0]).toBe(
      "The parser test for the new `owner:` prefix fails. Can you find out why and fix it?",
    );
    // The `/model` command the session opens with is a status, not a post.
    expect(briefs[0]).toBe("/model");
    expect(briefs).toContain("Bash → npm test");
    expect(briefs.some((brief) => brief.startsWith("[thinking] "))).toBe(true);
    expect(briefs.some((brief) => /^→ .+ \(\d+ lines?\)$/.test(brief))).toBe(true);
    expect(briefs).toContain("Interrupted by the user");
    expect(briefs).toContain("Context compacted");
    expect(
      items.some(
        (item) =>
          item.metadata?.type === "status" && (item.metadata as { status: string }).status === "api_error",
      ),
    ).toBe(true);
    const pasted = items.find(
      (item) => item.metadata === undefined && item.content[0]!.text.includes("[image: image/png"),
    );
    expect(pasted).toBeDefined();
  });

  it("Codex: shell commands are shown without their bash -lc wrapper, patches by file", async () => {
    const briefs = convertCodexRollout(await readFixture("codex-rollout.jsonl")).items.map(
      (item) => item.content[0]!.text,
    );
    expect(briefs).toContain("shell → npm test");
    expect(briefs).toContain("apply_patch → src/prefix.ts");
    expect(briefs.some((brief) => brief.startsWith("→ Success. Updated the following files:"))).toBe(true);
    expect(briefs.filter((brief) => brief.includes("environment_context"))).toEqual([]);
  });
});
