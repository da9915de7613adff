import { isSafeId } from "@stowage/core";
import { expectStowageError, HOSTILE_KEYS, UNUSUAL_SAFE_KEYS } from "@stowage/core/testing";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { isThreadItem, parseThreadItem, threadItemProblem } from "../../src/schema/parse-thread-item.js";
import { THREAD_ITEM_TYPES } from "../../src/schema/thread-item-schema.js";
import { SAMPLE_ITEMS } from "../support/sample-items.js";
import { THREAD_ITEM_JSON_SCHEMA } from "../support/thread-item-json-schema.js";

const validateJson = new Ajv2020({ strict: false }).compile(THREAD_ITEM_JSON_SCHEMA);

const text = (value: string) => [{ type: "text", text: value }];

/** Items that must be rejected, each with the field the message must name. */
const INVALID: [string, unknown, string][] = [
  ["not an object", "hello", "(root)"],
  ["null", null, "(root)"],
  ["no content", { metadata: { type: "text" } }, "content"],
  ["empty content", { content: [] }, "content"],
  ["content item without text", { content: [{ type: "text" }] }, "content[0].text"],
  ["content item of another type", { content: [{ type: "image", data: "x" }] }, "content[0].type"],
  ["unknown metadata.type", { content: text("x"), metadata: { type: "bogus" } }, "metadata.type"],
  ["metadata.type of the wrong kind", { content: text("x"), metadata: { type: 7 } }, "metadata.type"],
  [
    "tool_call without invocation_id",
    { content: text("x"), metadata: { type: "tool_call", tool: { name: "Bash", input: {} } } },
    "metadata.tool.invocation_id",
  ],
  [
    "tool_call with an empty name",
    {
      content: text("x"),
      metadata: { type: "tool_call", tool: { name: "", invocation_id: "a", input: {} } },
    },
    "metadata.tool.name",
  ],
  [
    "tool_result with non-string output",
    {
      content: text("x"),
      metadata: { type: "tool_result", tool: { invocation_id: "a", is_error: false, output: 3 } },
    },
    "metadata.tool.output",
  ],
  [
    "tool_result without is_error",
    { content: text("x"), metadata: { type: "tool_result", tool: { invocation_id: "a", output: "" } } },
    "metadata.tool.is_error",
  ],
  [
    "thinking with negative length",
    { content: text("x"), metadata: { type: "thinking", text: "t", full_text_length: -1 } },
    "metadata.full_text_length",
  ],
  [
    "status token with spaces",
    { content: text("x"), metadata: { type: "status", status: "Compacting context" } },
    "metadata.status",
  ],
  [
    "turn_end with fractional tokens",
    {
      content: text("x"),
      metadata: {
        type: "turn_end",
        stats: { input_tokens: 1.5, input_tokens_cached: 0, output_tokens: 0, duration_ms: 1 },
      },
    },
    "metadata.stats.input_tokens",
  ],
  [
    "turn_end with more cached than total",
    {
      content: text("x"),
      metadata: {
        type: "turn_end",
        stats: { input_tokens: 10, input_tokens_cached: 11, output_tokens: 0, duration_ms: null },
      },
    },
    "metadata.stats.input_tokens_cached",
  ],
  [
    "pending_prompt of an unknown kind",
    { content: text("x"), metadata: { type: "pending_prompt", prompt_id: "p", prompt: { kind: "voice" } } },
    "metadata.prompt.kind",
  ],
  [
    "ask_user_question without questions",
    {
      content: text("x"),
      metadata: {
        type: "pending_prompt",
        prompt_id: "p",
        prompt: { kind: "ask_user_question", questions: [] },
      },
    },
    "metadata.prompt.questions",
  ],
  [
    "resolution with an unknown outcome",
    {
      content: text("x"),
      metadata: { type: "pending_prompt_resolved", prompt_id: "p", kind: "text", outcome: "ignored" },
    },
    "metadata.outcome",
  ],
  [
    "truncated_fields naming another field",
    { content: text("x"), metadata: { type: "text", truncated_fields: ["secret"] } },
    "metadata.truncated_fields[0]",
  ],
  ["id with a traversal", { id: "../x", content: text("x") }, "id"],
  ["id with a NUL", { id: "a\u0000b", content: text("x") }, "id"],
  ["id too long", { id: "a".repeat(201), content: text("x") }, "id"],
];

describe("thread item schema", () => {
  it.each(Object.entries(SAMPLE_ITEMS))("accepts a %s item, in zod and in the JSON Schema", (_, item) => {
    expect(isThreadItem(item)).toBe(true);
    expect(parseThreadItem(item)).toBe(item);
    expect(validateJson(item)).toBe(true);
  });

  it("keeps a plain post (no metadata.type) valid, with or without truncation markers", () => {
    const post = {
      content: text("x"),
      metadata: { truncated: true, truncated_fields: ["content[0].text"], local_log: "j/l" },
    };
    expect(isThreadItem(post)).toBe(true);
    expect(validateJson(post)).toBe(true);
  });

  it("accepts unknown token figures (null) in a turn_end, and checks cached ≤ input only when both are known", () => {
    const turnEnd = (stats: Record<string, number | null>) => ({
      content: text("Turn complete"),
      metadata: { type: "turn_end", stats: { duration_ms: 1000, ...stats } },
    });
    for (const stats of [
      { input_tokens: null, input_tokens_cached: null, output_tokens: null },
      { input_tokens: null, input_tokens_cached: 500, output_tokens: 3 },
      { input_tokens: 10, input_tokens_cached: null, output_tokens: null },
    ]) {
      expect(isThreadItem(turnEnd(stats)), JSON.stringify(stats)).toBe(true);
      expect(validateJson(turnEnd(stats)), JSON.stringify(stats)).toBe(true);
    }
    // Absent is not unknown: a figure must be there, as a count or as null.
    const absent = { content: text("x"), metadata: { type: "turn_end", stats: { duration_ms: null } } };
    expect(isThreadItem(absent)).toBe(false);
    expect(validateJson(absent)).toBe(false);
  });

  it.each(INVALID)("rejects %s with INVALID_INPUT naming %s", async (_, value, field) => {
    expect(isThreadItem(value)).toBe(false);
    expect(threadItemProblem(value)).toContain(field);
    await expectStowageError(() => parseThreadItem(value), "INVALID_INPUT");
  });

  it("says which metadata types are accepted", () => {
    const problem = threadItemProblem({ content: text("x"), metadata: { type: "bogus" } });
    for (const type of THREAD_ITEM_TYPES) expect(problem).toContain(`"${type}"`);
    expect(problem).toContain('got "bogus"');
  });

  it("the JSON Schema agrees with zod on the invalid table (refinements aside)", () => {
    for (const [why, value] of INVALID) {
      // JSON Schema cannot express "cached ≤ total"; zod checks it.
      if (why === "turn_end with more cached than total") continue;
      expect(validateJson(value), why).toBe(false);
    }
  });

  it("JSON Schema: item ids follow core's safe id, up to 200 characters", () => {
    const ids = [
      ...HOSTILE_KEYS.map((row) => row.value),
      ...UNUSUAL_SAFE_KEYS,
      "0b6f4e0a-9f0c-4d35-8a1e-2f4f1c1b7a11:3",
      "user@host",
      "a.b_c-d",
      "x".repeat(200),
      "x".repeat(201),
      "-leading-dash",
    ].filter((id) => typeof id === "string");
    for (const id of ids) {
      const accepted = isSafeId(id, 200);
      expect(validateJson({ id, content: text("x") }), JSON.stringify(id)).toBe(accepted);
      expect(isThreadItem({ id, content: text("x") }), JSON.stringify(id)).toBe(accepted);
    }
    expect(isSafeId("user@host", 200)).toBe(true);
    expect(isSafeId("x".repeat(201), 200)).toBe(false);
  });

  it("JSON Schema: a plain post may not carry a metadata.type of any value", () => {
    expect(validateJson({ content: text("x"), metadata: { type: null } })).toBe(false);
    expect(validateJson({ content: text("x"), metadata: {} })).toBe(true);
  });
});
