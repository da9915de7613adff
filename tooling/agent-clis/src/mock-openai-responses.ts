import {
  type MockModelServer,
  type MockServerOptions,
  sendEvents,
  sendJson,
  startMockServer,
} from "./mock-server.js";

/** A Responses API request as the mock sees it (the rest is in the log). */
export interface ResponsesRequest {
  model?: string;
  /** The conversation so far: messages, function calls and their outputs. */
  input?: unknown[];
  instructions?: string;
  stream?: boolean;
}

/**
 * What the Responses mock answers: text, or a call of one of the request's function tools (the
 * client runs it and sends a `function_call_output` with the same `call_id` in its next request).
 */
export type ResponsesReply =
  | string
  | {
      functionCall: {
        name: string;
        arguments: Record<string, unknown>;
        /** The `namespace` tool the function is in (Codex offers each MCP server's tools as `mcp__<server>`). */
        namespace?: string;
        callId?: string;
      };
    };

export interface ResponsesMockOptions extends MockServerOptions {
  /** The answer to the `n`-th `POST /v1/responses` (from 0). Default the text `mock reply <n>: received <m> input items`. */
  reply?: (request: ResponsesRequest, n: number) => ResponsesReply;
}

/** The default canned reply: says how many input items the request carried. */
export function defaultResponsesReply(request: ResponsesRequest, n: number): string {
  return `mock reply ${n}: received ${request.input?.length ?? 0} input items`;
}

/**
 * A mock of the OpenAI Responses API on 127.0.0.1 for Codex (a model provider with
 * `base_url = <url>/v1`, `wire_api = "responses"`): `POST /v1/responses` streamed as SSE, each
 * event named by its `type`; `GET /v1/models` lists one model; anything else is 404.
 */
export function startResponsesMock(options: ResponsesMockOptions = {}): Promise<MockModelServer> {
  const reply = options.reply ?? defaultResponsesReply;
  let responsesCount = 0;
  return startMockServer((request, response) => {
    if (request.method === "GET" && request.path === "/v1/models") {
      sendJson(response, 200, { object: "list", data: [{ id: "gpt-5", object: "model", owned_by: "mock" }] });
      return;
    }
    if (request.method !== "POST" || request.path !== "/v1/responses") {
      sendJson(response, 404, { error: { type: "not_found", message: "not mocked" } });
      return;
    }
    const body = (request.body ?? {}) as ResponsesRequest;
    const n = responsesCount++;
    const answer = reply(body, n);
    const id = `resp_mock_${n}`;
    const itemId = `${typeof answer === "string" ? "msg" : "fc"}_mock_${n}`;
    const base = { id, object: "response", created_at: 0, model: body.model ?? "gpt-5" };
    const usage = {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 15,
    };
    let item: Record<string, unknown>;
    let middle: Record<string, unknown>[];
    if (typeof answer === "string") {
      item = {
        type: "message",
        id: itemId,
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: answer, annotations: [] }],
      };
      middle = [
        {
          type: "response.output_item.added",
          output_index: 0,
          item: { ...item, status: "in_progress", content: [] },
        },
        {
          type: "response.output_text.delta",
          item_id: itemId,
          output_index: 0,
          content_index: 0,
          delta: answer,
        },
      ];
    } else {
      const call = answer.functionCall;
      const args = JSON.stringify(call.arguments);
      item = {
        type: "function_call",
        id: itemId,
        call_id: call.callId ?? `call_mock_${n}`,
        name: call.name,
        ...(call.namespace === undefined ? {} : { namespace: call.namespace }),
        arguments: args,
        status: "completed",
      };
      middle = [
        {
          type: "response.output_item.added",
          output_index: 0,
          item: { ...item, arguments: "", status: "in_progress" },
        },
        { type: "response.function_call_arguments.delta", item_id: itemId, output_index: 0, delta: args },
        { type: "response.function_call_arguments.done", item_id: itemId, output_index: 0, arguments: args },
      ];
    }
    sendEvents(
      response,
      [
        { type: "response.created", response: { ...base, status: "in_progress", output: [] } },
        ...middle,
        { type: "response.output_item.done", output_index: 0, item },
        { type: "response.completed", response: { ...base, status: "completed", output: [item], usage } },
      ].map((data) => ({ event: data.type as string, data })),
    );
  }, options);
}
