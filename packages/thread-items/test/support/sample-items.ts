import type { ThreadItem } from "../../src/index.js";

/** One valid item of every kind, as the seed document shows them. */
export const SAMPLE_ITEMS: Readonly<Record<string, ThreadItem>> = {
  text: {
    content: [
      { type: "text", text: "Looks like the issue is in `parseToken` — it doesn't handle the new prefix." },
    ],
    metadata: { type: "text" },
  },
  tool_call: {
    content: [{ type: "text", text: "Bash → npm test" }],
    metadata: {
      type: "tool_call",
      tool: {
        name: "Bash",
        invocation_id: "tu_01J",
        input: { command: "npm test", description: "Run the test suite" },
      },
    },
  },
  tool_result: {
    content: [{ type: "text", text: "→ ✓ src/parser.test.ts (12 ok) (3 lines)" }],
    metadata: {
      type: "tool_result",
      tool: {
        invocation_id: "tu_01J",
        is_error: false,
        output: "✓ src/parser.test.ts (12 ok)\nTest Files  1 passed (1)\n",
      },
    },
  },
  thinking: {
    content: [{ type: "text", text: "[thinking] Considering the user's request…" }],
    metadata: {
      type: "thinking",
      text: "Considering the user's request and looking at the parser code",
      full_text_length: 62,
    },
  },
  status: {
    content: [{ type: "text", text: "Compacting context..." }],
    metadata: { type: "status", status: "compacting_context", detail: "Reducing 38k → 12k tokens" },
  },
  turn_end: {
    content: [{ type: "text", text: "Turn complete" }],
    metadata: {
      type: "turn_end",
      stats: { input_tokens: 12480, input_tokens_cached: 9600, output_tokens: 1322, duration_ms: 8421 },
    },
  },
  pending_prompt: {
    content: [{ type: "text", text: "Approval needed: Bash → rm -rf build" }],
    metadata: {
      type: "pending_prompt",
      prompt_id: "p1",
      prompt: { kind: "approval", tool_name: "Bash", input: { command: "rm -rf build" } },
    },
  },
  pending_prompt_resolved: {
    content: [{ type: "text", text: "Denied" }],
    metadata: {
      type: "pending_prompt_resolved",
      prompt_id: "p1",
      kind: "approval",
      outcome: "cancelled",
      approved: false,
    },
  },
  plain_post: { content: [{ type: "text", text: "please also update the README" }], user_id: "u_42" },
  plain_post_with_metadata: {
    content: [{ type: "text", text: "hello" }],
    metadata: { source: "web" },
  },
};
