import {
  type MockModelServer,
  type MockServerOptions,
  sendEvents,
  sendJson,
  startMockServer,
} from "./mock-server.js";

/** What the Anthropic mock answers to one `POST /v1/messages`. */
export type AnthropicReply =
  | { text: string }
  /** The model calls a tool; the client answers with a `tool_result` in its next request. */
  | { toolUse: { name: string; input: Record<string, unknown>; id?: string } };

/** A Messages request as the mock sees it (the fields the scripts need; the rest is in the log). */
export interface AnthropicRequest {
  model?: string;
  messages?: { role: string; content: unknown }[];
  system?: unknown;
  tools?: { name: string }[];
  stream?: boolean;
}

export interface AnthropicMockOptions extends MockServerOptions {
  /**
   * The reply to the `n`-th `POST /v1/messages` (from 0). Default: the text
   * `mock reply <n>: received <m> messages`.
   */
  reply?: (request: AnthropicRequest, n: number) => AnthropicReply;
}

/** The default canned reply: says how many messages the request carried, which a test can check. */
export function defaultAnthropicReply(request: AnthropicRequest, n: number): AnthropicReply {
  return { text: `mock reply ${n}: received ${request.messages?.length ?? 0} messages` };
}

/**
 * A mock of the Anthropic Messages API on 127.0.0.1 for Claude Code
 * (`ANTHROPIC_BASE_URL=<url>`): `POST /v1/messages`, streamed (SSE) or not, and
 * `POST /v1/messages/count_tokens`; anything else is 404.
 */
export function startAnthropicMock(options: AnthropicMockOptions = {}): Promise<MockModelServer> {
  const reply = options.reply ?? defaultAnthropicReply;
  let messagesCount = 0;
  return startMockServer((request, response) => {
    if (request.method === "POST" && request.path === "/v1/messages/count_tokens") {
      sendJson(response, 200, { input_tokens: JSON.stringify(request.body ?? "").length >> 2 });
      return;
    }
    if (request.method !== "POST" || request.path !== "/v1/messages") {
      sendJson(response, 404, { type: "error", error: { type: "not_found_error", message: "not mocked" } });
      return;
    }
    const body = (request.body ?? {}) as AnthropicRequest;
    const n = messagesCount++;
    const answer = reply(body, n);
    const message = {
      id: `msg_mock_${n}`,
      type: "message",
      role: "assistant",
      model: body.model ?? "claude-mock",
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 5 },
    };
    const block =
      "text" in answer
        ? { type: "text", text: answer.text }
        : {
            type: "tool_use",
            id: answer.toolUse.id ?? `toolu_mock_${n}`,
            name: answer.toolUse.name,
            input: answer.toolUse.input,
          };
    const stopReason = "text" in answer ? "end_turn" : "tool_use";
    if (!body.stream) {
      sendJson(response, 200, { ...message, content: [block], stop_reason: stopReason });
      return;
    }
    const start = block.type === "text" ? { type: "text", text: "" } : { ...block, input: {} };
    const delta =
      "text" in answer
        ? { type: "text_delta", text: answer.text }
        : { type: "input_json_delta", partial_json: JSON.stringify(answer.toolUse.input) };
    sendEvents(
      response,
      [
        { type: "message_start", message: { ...message, content: [], stop_reason: null } },
        { type: "content_block_start", index: 0, content_block: start },
        { type: "content_block_delta", index: 0, delta },
        { type: "content_block_stop", index: 0 },
        {
          type: "message_delta",
          delta: { stop_reason: stopReason, stop_sequence: null },
          usage: { output_tokens: 5 },
        },
        { type: "message_stop" },
      ].map((data) => ({ event: data.type, data })),
    );
  }, options);
}
