import { describe, expect, it } from "vitest";
import { type JsonBudget, readJsonWithinBudget } from "../src/json-budget.js";
import { expectStowageError } from "../src/testing/expect-stowage-error.js";

const budget: JsonBudget = { maxBytes: 1024, maxDepth: 3, maxValues: 8 };
const encoder = new TextEncoder();

/** `text` as a stream, cut into chunks of `size` bytes (so a chunk may end inside a string or an escape). */
function streamOf(text: string, size = 1): ReadableStream<Uint8Array> {
  const bytes = encoder.encode(text);
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.subarray(offset, offset + size));
      offset += size;
    },
  });
}

describe("readJsonWithinBudget", () => {
  it.each([
    ["an object at the depth limit", '{"a":[{"b":1}]}', { a: [{ b: 1 }] }],
    [
      "brackets, commas and escaped quotes inside strings",
      '["[[[[,,,,]]]]\\"{{{{,,,,"]',
      ['[[[[,,,,]]]]"{{{{,,,,'],
    ],
    ["a backslash ending a string", '["\\\\",[[1]]]', ["\\", [[1]]]],
    ["eight values", "[1,2,3,4,5,6,7]", [1, 2, 3, 4, 5, 6, 7]],
    ["multi-byte text cut anywhere", '{"é😀":"日本"}', { "é😀": "日本" }],
    ["a scalar", "42", 42],
  ])("parses %s, read one byte at a time", async (_, text, expected) => {
    expect(await readJsonWithinBudget(streamOf(text), budget)).toEqual(expected);
  });

  it.each([
    ["nested four deep", "[[[[]]]]", "INVALID_INPUT", "JSON_TOO_DEEP"],
    ["objects nested four deep", '{"a":{"a":{"a":{"a":1}}}}', "INVALID_INPUT", "JSON_TOO_DEEP"],
    ["nine values", "[1,2,3,4,5,6,7,8,9]", "INVALID_INPUT", "JSON_TOO_MANY_VALUES"],
    ["five empty objects", "[{},{},{},{},{}]", "INVALID_INPUT", "JSON_TOO_MANY_VALUES"],
    ["one byte over the size", `"${"x".repeat(1023)}"`, "TOO_LARGE", "JSON_TOO_LARGE"],
    ["not JSON", "{not json", "INVALID_INPUT", "INVALID_JSON"],
    ["an empty text", "", "INVALID_INPUT", "INVALID_JSON"],
    ["a string that never ends hiding brackets", '["[[[[[[', "INVALID_INPUT", "INVALID_JSON"],
  ])("refuses %s", async (_, text, code, reason) => {
    await expectStowageError(readJsonWithinBudget(streamOf(text, 3), budget), code as never, reason);
  });

  it("stops reading (and cancels the stream) at the first chunk over the budget", async () => {
    let pulled = 0;
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(encoder.encode("[".repeat(16)));
      },
      cancel() {
        cancelled = true;
      },
    });
    await expectStowageError(readJsonWithinBudget(endless, budget), "INVALID_INPUT", "JSON_TOO_DEEP");
    expect(pulled).toBeLessThanOrEqual(2);
    expect(cancelled).toBe(true);
  });

  it("refuses a declared length over the budget without reading anything", async () => {
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(encoder.encode("1"));
        controller.close();
      },
    });
    await expectStowageError(
      readJsonWithinBudget(stream, budget, { declaredBytes: 1025 }),
      "TOO_LARGE",
      "JSON_TOO_LARGE",
    );
    expect(pulled).toBeLessThanOrEqual(1); // a stream pulls once when made; nothing was read
  });

  it("reads no stream as an empty text, and refuses a budget that is not one", async () => {
    await expectStowageError(readJsonWithinBudget(null, budget), "INVALID_INPUT", "INVALID_JSON");
    await expectStowageError(
      readJsonWithinBudget(streamOf("1"), { maxBytes: 10, maxDepth: Number.NaN, maxValues: 1 }),
      "INVALID_INPUT",
    );
  });

  it("is ABORTED when its signal fires", async () => {
    const controller = new AbortController();
    controller.abort();
    await expectStowageError(
      readJsonWithinBudget(streamOf("1"), budget, { signal: controller.signal }),
      "ABORTED",
    );
  });
});
