import { Buffer } from "node:buffer";
import { StowageError } from "@stowage/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  fitToBudget,
  measureThreadItem,
  TRUNCATION_HEAD_BYTES,
  TRUNCATION_TAIL_BYTES,
} from "../../src/budget/fit-to-budget.js";
import { isThreadItem } from "../../src/schema/parse-thread-item.js";
import type { ThreadItem } from "../../src/schema/thread-item-schema.js";

const PATH = "job-7/threads/alias/logs/thread.log";
const MARKER = /…\[truncated (\d+) bytes; see job-7\/threads\/alias\/logs\/thread\.log\]…/;

// Pieces of every UTF-8 width, JSON escapes and a lone surrogate, repeated into long runs.
const piece = fc.constantFrom("a", "Z", " ", "\n", "é", "€", "😀", "\ud800", '"', "\\", "\u0001", "漢");
const text = fc
  .array(fc.tuple(piece, fc.integer({ min: 1, max: 4000 })), { maxLength: 12 })
  .map((runs) => runs.map(([chunk, count]) => chunk.repeat(count)).join(""));

const item: fc.Arbitrary<ThreadItem> = fc.oneof(
  fc
    .record({ output: text, brief: text, extra: fc.option(text, { nil: undefined }) })
    .map(({ output, brief, extra }) => ({
      content: [{ type: "text" as const, text: brief }],
      metadata: {
        type: "tool_result" as const,
        tool: { invocation_id: "tu_1", is_error: false, output },
        ...(extra === undefined ? {} : { text: extra }),
      },
    })),
  fc.record({ command: text, brief: text }).map(({ command, brief }) => ({
    content: [{ type: "text" as const, text: brief }],
    metadata: {
      type: "tool_call" as const,
      tool: { name: "Bash", invocation_id: "tu_2", input: { command, n: 1 } },
    },
  })),
  fc.record({ thought: text, brief: text }).map(({ thought, brief }) => ({
    content: [{ type: "text" as const, text: brief }],
    metadata: { type: "thinking" as const, text: thought, full_text_length: thought.length },
  })),
  text.map((body) => ({ content: [{ type: "text" as const, text: body }] })),
);

const FIELDS: Record<string, (value: ThreadItem) => unknown> = {
  "tool.output": (value) => (value.metadata as { tool?: { output?: unknown } } | undefined)?.tool?.output,
  "tool.input": (value) => (value.metadata as { tool?: { input?: unknown } } | undefined)?.tool?.input,
  text: (value) => (value.metadata as { text?: unknown } | undefined)?.text,
  "content[0].text": (value) => value.content[0]?.text,
};

/** Checks that a cut field is an exact head + marker + tail of the original (or the marker alone). */
function expectExactCut(original: unknown, cut: string): void {
  const source = typeof original === "string" ? original : JSON.stringify(original);
  const sourceBytes = Buffer.from(source);
  const match = MARKER.exec(cut);
  expect(match).not.toBeNull();
  const head = Buffer.from(cut.slice(0, match!.index));
  const tail = Buffer.from(cut.slice(match!.index + match![0].length));
  const removed = Number(match![1]);
  expect(head.length + removed + tail.length).toBe(sourceBytes.length);
  if (head.length === 0 && tail.length === 0) return; // dropped: the marker alone
  expect(head.length).toBeLessThanOrEqual(TRUNCATION_HEAD_BYTES);
  expect(tail.length).toBeLessThanOrEqual(TRUNCATION_TAIL_BYTES);
  // Not just short enough: as long as possible without splitting a character (at most 3 bytes short).
  expect(head.length).toBeGreaterThan(TRUNCATION_HEAD_BYTES - 4);
  expect(tail.length).toBeGreaterThan(TRUNCATION_TAIL_BYTES - 4);
  expect(sourceBytes.subarray(0, head.length).equals(head)).toBe(true);
  expect(sourceBytes.subarray(sourceBytes.length - tail.length).equals(tail)).toBe(true);
}

describe("fitToBudget properties", () => {
  it("a fitted item is valid, fits the budget, and its cuts are exact byte prefixes and suffixes", () => {
    fc.assert(
      fc.property(item, fc.integer({ min: 300, max: 60_000 }), (original, budgetBytes) => {
        const before = JSON.stringify(original);
        let fitted: ThreadItem;
        try {
          fitted = fitToBudget(original, { budgetBytes, localLogPath: PATH });
        } catch (err) {
          // Only when even the markers do not fit; the error says by how much.
          expect(StowageError.is(err, "TOO_LARGE")).toBe(true);
          expect((err as StowageError).details!.sizeBytes as number).toBeGreaterThan(budgetBytes);
          expect(JSON.stringify(original)).toBe(before);
          return;
        }
        expect(JSON.stringify(original)).toBe(before);
        expect(isThreadItem(fitted)).toBe(true);
        expect(measureThreadItem(fitted)).toBeLessThanOrEqual(budgetBytes);
        if (fitted === original) {
          expect(measureThreadItem(original)).toBeLessThanOrEqual(budgetBytes);
          return;
        }
        const metadata = fitted.metadata as {
          truncated?: boolean;
          truncated_fields?: string[];
          local_log?: string;
        };
        expect(metadata.truncated).toBe(true);
        expect(metadata.local_log).toBe(PATH);
        for (const [name, read] of Object.entries(FIELDS)) {
          if (metadata.truncated_fields!.includes(name))
            expectExactCut(read(original), read(fitted) as string);
          else expect(read(fitted)).toEqual(read(original));
        }
      }),
      { numRuns: 300 },
    );
  });

  it("is idempotent: a fitted item fits again unchanged", () => {
    fc.assert(
      fc.property(item, fc.integer({ min: 2_000, max: 60_000 }), (original, budgetBytes) => {
        let fitted: ThreadItem;
        try {
          fitted = fitToBudget(original, { budgetBytes, localLogPath: PATH });
        } catch {
          return;
        }
        expect(fitToBudget(fitted, { budgetBytes, localLogPath: PATH })).toBe(fitted);
      }),
      { numRuns: 100 },
    );
  });
});
