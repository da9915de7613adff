import { Buffer } from "node:buffer";
import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_BUDGET_BYTES,
  fitToBudget,
  MAX_LOCAL_LOG_PATH_BYTES,
  measureThreadItem,
  THREAD_ITEM_TOO_LARGE,
  TRUNCATION_HEAD_BYTES,
  TRUNCATION_TAIL_BYTES,
} from "../../src/budget/fit-to-budget.js";
import { truncationMarker } from "../../src/budget/truncation-marker.js";
import { isThreadItem } from "../../src/schema/parse-thread-item.js";
import type { ThreadItem, ToolResultItem } from "../../src/schema/thread-item-schema.js";
import { deepFreeze } from "../support/deep-freeze.js";

const PATH = "job-1/threads/main/logs/thread.log";
const bytes = (text: string) => Buffer.byteLength(text);
const marker = (removed: number) => truncationMarker(removed, PATH);

function result(output: string, extra: Record<string, unknown> = {}, brief = "→ x (1 line)"): ToolResultItem {
  return deepFreeze({
    content: [{ type: "text", text: brief }],
    metadata: { type: "tool_result", tool: { invocation_id: "tu_1", is_error: false, output }, ...extra },
  });
}

const fit = (item: ThreadItem, budgetBytes?: number) =>
  fitToBudget(item, { localLogPath: PATH, ...(budgetBytes === undefined ? {} : { budgetBytes }) });

const outputOf = (item: ThreadItem) => (item.metadata as ToolResultItem["metadata"]).tool.output;

const expectTooLarge = (run: () => unknown) => expectStowageError(run, "TOO_LARGE", THREAD_ITEM_TOO_LARGE);

describe("fitToBudget: under the budget", () => {
  it("returns the very same item when it fits the default 350,000 bytes", () => {
    const item = result("x".repeat(300_000));
    expect(measureThreadItem(item)).toBeLessThan(DEFAULT_BUDGET_BYTES);
    expect(fit(item)).toBe(item);
  });

  it("an item of exactly the budget fits; one byte less and it is cut", () => {
    const item = result("x".repeat(20_000));
    const size = measureThreadItem(item);
    expect(fit(item, size)).toBe(item);
    const fitted = fit(item, size - 1);
    expect(fitted).not.toBe(item);
    expect(measureThreadItem(fitted)).toBeLessThanOrEqual(size - 1);
    expect(fitted.metadata).toMatchObject({
      truncated: true,
      truncated_fields: ["tool.output"],
      local_log: PATH,
    });
  });

  it("measures UTF-8 bytes, not characters: 200,000 × 'é' is 400,000 bytes and is cut", () => {
    const item = result("é".repeat(200_000));
    expect(measureThreadItem(item)).toBeGreaterThan(DEFAULT_BUDGET_BYTES);
    expect(fit(item)).not.toBe(item);
  });
});

describe("fitToBudget: head 4 KB + marker + tail 2 KB", () => {
  it("keeps exactly 4,096 and 2,048 bytes of ASCII and counts the rest exactly", () => {
    const output = `${"h".repeat(5000)}${"m".repeat(500_000)}${"t".repeat(3000)}`;
    const fitted = fit(result(output));
    const removed = bytes(output) - TRUNCATION_HEAD_BYTES - TRUNCATION_TAIL_BYTES;
    expect(outputOf(fitted)).toBe(`${"h".repeat(4096)}${marker(removed)}${"t".repeat(2048)}`);
    expect(outputOf(fitted)).toContain("…[truncated 501856 bytes; see job-1/threads/main/logs/thread.log]…");
    expect(fitted.metadata).toEqual({
      type: "tool_result",
      tool: { invocation_id: "tu_1", is_error: false, output: outputOf(fitted) },
      truncated: true,
      truncated_fields: ["tool.output"],
      local_log: PATH,
    });
    expect(isThreadItem(fitted)).toBe(true);
  });

  // [character at the cut, head bytes kept, tail bytes kept]
  it.each([
    ["é (2 bytes)", "é", 4095, 2047],
    ["€ (3 bytes)", "€", 4094, 2046],
    ["😀 (4 bytes)", "😀", 4093, 2045],
  ])("never splits %s at either cut point", (_, char, headBytes, tailBytes) => {
    // The multi-byte character ends one byte past the cut, so it would straddle it.
    const head = `${"a".repeat(headBytes)}${char}`;
    const tail = `${char}${"z".repeat(tailBytes)}`;
    const output = `${head}${"m".repeat(400_000)}${tail}`;
    const fitted = outputOf(fit(result(output)));
    const removed = bytes(output) - headBytes - tailBytes;
    expect(fitted).toBe(`${"a".repeat(headBytes)}${marker(removed)}${"z".repeat(tailBytes)}`);
    const original = Buffer.from(output);
    expect(original.subarray(0, headBytes).toString()).toBe("a".repeat(headBytes));
    expect(original.subarray(original.length - tailBytes).toString()).toBe("z".repeat(tailBytes));
  });

  it("keeps a multi-byte character that ends exactly at the cut", () => {
    const output = `${"a".repeat(TRUNCATION_HEAD_BYTES - 4)}😀${"m".repeat(400_000)}😀${"z".repeat(TRUNCATION_TAIL_BYTES - 4)}`;
    const fitted = outputOf(fit(result(output)));
    expect(fitted.startsWith(`${"a".repeat(TRUNCATION_HEAD_BYTES - 4)}😀…[truncated`)).toBe(true);
    expect(fitted.endsWith(`]…😀${"z".repeat(TRUNCATION_TAIL_BYTES - 4)}`)).toBe(true);
    expect(fitted).toContain(`truncated ${bytes(output) - 4096 - 2048} bytes`);
  });

  it("counts a lone surrogate as the 3 bytes of U+FFFD, as every UTF-8 encoder writes it", () => {
    const output = `\ud800${"m".repeat(400_000)}\udc00`;
    const fitted = outputOf(fit(result(output)));
    expect(fitted.startsWith("\ud800m")).toBe(true);
    expect(fitted.endsWith("m\udc00")).toBe(true);
    expect(fitted).toContain(`truncated ${bytes(output) - 4096 - 2048} bytes`);
  });

  it("serializes a non-string tool input before cutting it", () => {
    const input = { command: "cat <<EOF", content: "x".repeat(400_000), nested: [1, 2, { ok: true }] };
    const item = deepFreeze<ThreadItem>({
      content: [{ type: "text", text: "Write → big" }],
      metadata: { type: "tool_call", tool: { name: "Write", invocation_id: "tu_2", input } },
    });
    const fitted = fit(item);
    const serialized = JSON.stringify(input);
    const cut = (fitted.metadata as { tool: { input: unknown } }).tool.input;
    expect(typeof cut).toBe("string");
    expect(cut).toBe(
      `${serialized.slice(0, 4096)}${marker(bytes(serialized) - 6144)}${serialized.slice(-2048)}`,
    );
    expect(fitted.metadata).toMatchObject({ truncated_fields: ["tool.input"] });
    expect(isThreadItem(fitted)).toBe(true);
  });

  it("cuts thinking text and a plain post's content[0].text", () => {
    const thinking = deepFreeze<ThreadItem>({
      content: [{ type: "text", text: "[thinking] …" }],
      metadata: { type: "thinking", text: "r".repeat(400_000), full_text_length: 400_000 },
    });
    const fittedThinking = fit(thinking);
    expect(fittedThinking.metadata).toMatchObject({ truncated_fields: ["text"], full_text_length: 400_000 });
    expect(measureThreadItem(fittedThinking)).toBeLessThan(7_000);

    const post = deepFreeze<ThreadItem>({
      content: [
        { type: "text", text: "p".repeat(400_000) },
        { type: "text", text: "second" },
      ],
    });
    const fittedPost = fit(post);
    expect(fittedPost.content[0]!.text).toBe(
      `${"p".repeat(4096)}${marker(400_000 - 6144)}${"p".repeat(2048)}`,
    );
    expect(fittedPost.content[1]).toEqual({ type: "text", text: "second" });
    expect(fittedPost.metadata).toEqual({
      truncated: true,
      truncated_fields: ["content[0].text"],
      local_log: PATH,
    });
    expect(isThreadItem(fittedPost)).toBe(true);
  });
});

describe("fitToBudget: order and stopping", () => {
  const big = (char: string) => char.repeat(300_000);

  it("cuts tool.output first and stops as soon as the item fits", () => {
    const item = result(big("o"), { text: "t".repeat(30_000) }, "c".repeat(30_000));
    const fitted = fit(item);
    expect(fitted.metadata).toMatchObject({ truncated_fields: ["tool.output"], text: "t".repeat(30_000) });
    expect(fitted.content[0]!.text).toBe("c".repeat(30_000));
  });

  it("goes on in the order tool.output, tool.input, text, content[0].text", () => {
    const item = deepFreeze<ThreadItem>({
      content: [{ type: "text", text: big("c") }],
      metadata: {
        type: "tool_result",
        text: big("t"),
        tool: { invocation_id: "tu_1", is_error: false, output: big("o"), input: big("i") },
      },
    });
    const all = fit(item, 300_000);
    expect(all.metadata).toMatchObject({
      truncated_fields: ["tool.output", "tool.input", "text", "content[0].text"],
    });
    expect(measureThreadItem(all)).toBeLessThanOrEqual(300_000);
    // 300 KB of content[0].text plus three cut fields fit the default budget: it stops after three.
    const three = fit(item);
    expect(three.metadata).toMatchObject({ truncated_fields: ["tool.output", "tool.input", "text"] });
    expect(three.content[0]!.text).toBe(big("c"));
    const two = fit(item, 620_000);
    expect(two.metadata).toMatchObject({ truncated_fields: ["tool.output", "tool.input"], text: big("t") });
  });

  it("leaves alone a field that cutting would not shorten", () => {
    // Over head + tail, but by fewer bytes than the marker takes.
    const smallish = "s".repeat(TRUNCATION_HEAD_BYTES + TRUNCATION_TAIL_BYTES + 20);
    const item = result(big("o"), {}, smallish);
    const fitted = fit(item, 14_000);
    expect(fitted.content[0]!.text).toBe(smallish);
    expect(fitted.metadata).toMatchObject({ truncated_fields: ["tool.output"] });
  });

  it("drop stage: still over after cutting, fields become the marker alone, in order, until it fits", () => {
    const item = result("o".repeat(100_000), {}, "c".repeat(100_000));
    const fitted = fit(item, 10_000);
    expect(outputOf(fitted)).toBe(marker(100_000));
    expect(fitted.content[0]!.text).toBe(`${"c".repeat(4096)}${marker(100_000 - 6144)}${"c".repeat(2048)}`);
    expect(fitted.metadata).toMatchObject({
      truncated: true,
      truncated_fields: ["tool.output", "content[0].text"],
      local_log: PATH,
    });
    expect(measureThreadItem(fitted)).toBeLessThanOrEqual(10_000);
    expect(isThreadItem(fitted)).toBe(true);

    const both = fit(item, 2_000);
    expect(outputOf(both)).toBe(marker(100_000));
    expect(both.content[0]!.text).toBe(marker(100_000));
    expect(measureThreadItem(both)).toBeLessThanOrEqual(2_000);
  });

  it("re-fitting a fitted item keeps its field list without duplicates", () => {
    const once = fit(result("o".repeat(100_000), {}, "c".repeat(100_000)), 20_000);
    const twice = fit(once, 2_000);
    expect(twice.metadata).toMatchObject({ truncated_fields: ["tool.output", "content[0].text"] });
  });
});

describe("fitToBudget: too large", () => {
  it("throws TOO_LARGE / THREAD_ITEM_TOO_LARGE when a field it may not cut is over the budget", async () => {
    const item = deepFreeze<ThreadItem>({
      content: [{ type: "text", text: "Waiting for input" }],
      metadata: {
        type: "pending_prompt",
        prompt_id: "p1",
        prompt: { kind: "text", text: "q".repeat(400_000) },
      },
    });
    const err = await expectTooLarge(() => fit(item));
    expect(err.details).toMatchObject({ budgetBytes: DEFAULT_BUDGET_BYTES });
    expect(err.details!.sizeBytes as number).toBeGreaterThan(DEFAULT_BUDGET_BYTES);
  });

  it("throws once even the markers alone do not fit", async () => {
    const item = result("o".repeat(100_000), {}, "c".repeat(100_000));
    const err = await expectTooLarge(() => fit(item, 300));
    expect(err.details!.sizeBytes as number).toBeGreaterThan(300);
    expect(err.message).toContain("tool.output, content[0].text");
  });
});

describe("fitToBudget: the input is never mutated", () => {
  it("leaves a deeply frozen item and its JSON unchanged, in every stage", async () => {
    const item = result("o".repeat(100_000), { text: "t".repeat(50_000) }, "c".repeat(100_000));
    const before = JSON.stringify(item);
    for (const budget of [DEFAULT_BUDGET_BYTES, 20_000, 10_000, 2_000]) fit(item, budget);
    await expectTooLarge(() => fit(item, 100));
    expect(JSON.stringify(item)).toBe(before);
  });
});

describe("fitToBudget: bad input", () => {
  const ok = result("x");
  it.each<[string, unknown]>([
    ["budget 0", { budgetBytes: 0, localLogPath: PATH }],
    ["negative budget", { budgetBytes: -1, localLogPath: PATH }],
    ["fractional budget", { budgetBytes: 1.5, localLogPath: PATH }],
    ["budget as a string", { budgetBytes: "350000", localLogPath: PATH }],
    ["budget NaN", { budgetBytes: Number.NaN, localLogPath: PATH }],
    ["no localLogPath", {}],
    ["empty localLogPath", { localLogPath: "" }],
    ["localLogPath with a newline", { localLogPath: "a\nb" }],
    ["localLogPath with NUL", { localLogPath: "a\u0000b" }],
    ["localLogPath too long", { localLogPath: "a".repeat(MAX_LOCAL_LOG_PATH_BYTES + 1) }],
    ["options missing", undefined],
  ])("rejects %s with INVALID_INPUT", async (_, options) => {
    await expectStowageError(() => fitToBudget(ok, options as never), "INVALID_INPUT");
  });

  it("says the longest localLogPath it accepts, 1,024 bytes, in details.limit", async () => {
    const err = await expectStowageError(
      () => fitToBudget(ok, { localLogPath: "é".repeat(513) }),
      "INVALID_INPUT",
    );
    expect(err.details).toEqual({ limit: 1024 });
  });

  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  let deep: unknown = "bottom";
  for (let i = 0; i < 100_000; i++) deep = [deep];

  it.each<[string, unknown]>([
    ["a string", "item"],
    ["no content", { metadata: { type: "text" } }],
    ["an unknown metadata.type", { content: [{ type: "text", text: "x" }], metadata: { type: "bogus" } }],
    [
      "a BigInt in the tool input",
      {
        content: [{ type: "text", text: "x" }],
        metadata: { type: "tool_call", tool: { name: "a", invocation_id: "b", input: { n: 1n } } },
      },
    ],
    [
      "a cycle in the tool input",
      {
        content: [{ type: "text", text: "x" }],
        metadata: { type: "tool_call", tool: { name: "a", invocation_id: "b", input: cyclic } },
      },
    ],
    [
      "a tool input nested 100,000 deep",
      {
        content: [{ type: "text", text: "x" }],
        metadata: { type: "tool_call", tool: { name: "a", invocation_id: "b", input: deep } },
      },
    ],
    ["a hostile item id", { id: "../../x", content: [{ type: "text", text: "x" }] }],
  ])("rejects an item with %s with INVALID_INPUT", async (_, item) => {
    await expectStowageError(() => fit(item as ThreadItem), "INVALID_INPUT");
  });
});
