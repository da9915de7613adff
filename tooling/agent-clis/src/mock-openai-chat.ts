import {
  type MockModelServer,
  type MockServerOptions,
  sendEvents,
  sendJson,
  startMockServer,
} from "./mock-server.js";

/** A chat completions request as the mock sees it (the rest is in the log). */
export interface ChatRequest {
  model?: string;
  messages?: { role: string; content: unknown; tool_call_id?: string }[];
  tools?: { type: string; function?: { name: string } }[];
  stream?: boolean;
}

/**
 * What the chat mock answers: text, or a call of one of the request's tools (the client runs it
 * and sends a `tool` message with the same `tool_call_id` in its next request).
 */
export type ChatReply =
  | string
  | { toolCall: { name: string; arguments: Record<string, unknown>; id?: string } };

export interface ChatMockOptions extends MockServerOptions {
  /** The answer to the `n`-th `POST /v1/chat/completions` (from 0). Default the text `mock reply <n>: received <m> messages`. */
  reply?: (request: ChatRequest, n: number) => ChatReply;
}

/** The default canned reply: says how many messages the request carried. */
export function defaultChatReply(request: ChatRequest, n: number): string {
  return `mock reply ${n}: received ${request.messages?.length ?? 0} messages`;
}

/**
 * A mock of OpenAI chat completions on 127.0.0.1 for OpenCode (an `@ai-sdk/openai-compatible`
 * provider with `baseURL = <url>/v1`): `POST /v1/chat/completions`, streamed as
 * `data: <chat.completion.chunk>` lines and `data: [DONE]` (JSON when not streamed), and
 * `GET /v1/models`; anything else is 404.
 */
export function startChatMock(options: ChatMockOptions = {}): Promise<MockModelServer> {
  const reply = options.reply ?? defaultChatReply;
  let completionsCount = 0;
  return startMockServer((request, response) => {
    if (request.method === "GET" && request.path === "/v1/models") {
      sendJson(response, 200, {
        object: "list",
        data: [{ id: "mock-model", object: "model", owned_by: "mock" }],
      });
      return;
    }
    if (request.method !== "POST" || request.path !== "/v1/chat/completions") {
      sendJson(response, 404, { error: { type: "not_found", message: "not mocked" } });
      return;
    }
    const body = (request.body ?? {}) as ChatRequest;
    const n = completionsCount++;
    const answer = reply(body, n);
    const base = { id: `chatcmpl-mock-${n}`, created: 0, model: body.model ?? "mock-model" };
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    const call =
      typeof answer === "string"
        ? undefined
        : {
            id: answer.toolCall.id ?? `call_mock_${n}`,
            type: "function",
            function: { name: answer.toolCall.name, arguments: JSON.stringify(answer.toolCall.arguments) },
          };
    const finishReason = call ? "tool_calls" : "stop";
    if (!body.stream) {
      const message = call
        ? { role: "assistant", content: null, tool_calls: [call] }
        : { role: "assistant", content: answer };
      sendJson(response, 200, {
        ...base,
        object: "chat.completion",
        choices: [{ index: 0, message, finish_reason: finishReason }],
        usage,
      });
      return;
    }
    const chunk = (delta: Record<string, unknown>, finish: string | null, extra: object = {}) => ({
      data: {
        ...base,
        object: "chat.completion.chunk",
        choices: [{ index: 0, delta, finish_reason: finish }],
        ...extra,
      },
    });
    const deltas = call
      ? [
          chunk(
            {
              role: "assistant",
              content: null,
              tool_calls: [
                {
                  index: 0,
                  id: call.id,
                  type: "function",
                  function: { name: call.function.name, arguments: "" },
                },
              ],
            },
            null,
          ),
          chunk({ tool_calls: [{ index: 0, function: { arguments: call.function.arguments } }] }, null),
        ]
      : [chunk({ role: "assistant", content: "" }, null), chunk({ content: answer }, null)];
    sendEvents(response, [...deltas, chunk({}, finishReason, { usage }), { data: "[DONE]" }]);
  }, options);
}
