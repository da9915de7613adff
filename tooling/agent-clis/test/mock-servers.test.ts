import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { type MockModelServer, startAnthropicMock, startChatMock, startResponsesMock } from "../src/index.js";
import { parseEventStream } from "./sse.js";

const open: MockModelServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((server) => server.close()));
});

async function started(server: Promise<MockModelServer>): Promise<MockModelServer> {
  const running = await server;
  open.push(running);
  return running;
}

function post(server: MockModelServer, path: string, body: unknown): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** Sends a request with the path exactly as given (no URL normalization) and returns its status. */
function rawStatus(server: MockModelServer, method: string, path: string): Promise<number | undefined> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, method, path }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The JSON `data` of each event, with its event name. */
async function events(response: Response) {
  expect(response.headers.get("content-type")).toBe("text/event-stream");
  return parseEventStream(await response.text()).map(({ event, data }) => ({
    event,
    data: data === "[DONE]" ? data : (JSON.parse(data) as Record<string, unknown>),
  }));
}

describe("Anthropic Messages mock", () => {
  it("streams a text answer as the Messages API's event sequence", async () => {
    const server = await started(startAnthropicMock());
    const response = await post(server, "/v1/messages", {
      model: "claude-x",
      stream: true,
      messages: [
        { role: "user", content: "a" },
        { role: "assistant", content: "b" },
        { role: "user", content: "c" },
      ],
    });
    const stream = await events(response);
    expect(stream.map((e) => e.event)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    // Each event's `type` repeats its name, as the API sends it.
    expect(stream.every((e) => typeof e.data === "object" && e.data.type === e.event)).toBe(true);
    expect(stream[1]?.data).toEqual({
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    });
    expect(stream[2]?.data).toEqual({
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: "mock reply 0: received 3 messages" },
    });
    expect((stream[4]?.data as { delta: unknown } | undefined)?.delta).toEqual({
      stop_reason: "end_turn",
      stop_sequence: null,
    });
  });

  it("streams a scripted tool_use whose input JSON arrives in input_json_delta", async () => {
    const server = await started(
      startAnthropicMock({
        reply: () => ({
          toolUse: { id: "toolu_1", name: "mcp__stowage__read_artifact", input: { id: "a1" } },
        }),
      }),
    );
    const stream = await events(await post(server, "/v1/messages", { stream: true, messages: [] }));
    expect(stream[1]?.data).toEqual({
      type: "content_block_start",
      index: 0,
      content_block: { type: "tool_use", id: "toolu_1", name: "mcp__stowage__read_artifact", input: {} },
    });
    const delta = (stream[2]?.data as { delta: { type: string; partial_json: string } } | undefined)?.delta;
    expect(delta?.type).toBe("input_json_delta");
    expect(JSON.parse(delta?.partial_json ?? "")).toEqual({ id: "a1" });
    expect((stream[4]?.data as { delta: { stop_reason: string } } | undefined)?.delta.stop_reason).toBe(
      "tool_use",
    );
  });

  it("answers a request without stream as one JSON message, and count_tokens with a count", async () => {
    const server = await started(startAnthropicMock({ reply: (_request, n) => ({ text: `turn ${n}` }) }));
    const message = await (
      await post(server, "/v1/messages", { messages: [{ role: "user", content: "x" }] })
    ).json();
    expect(message).toMatchObject({
      type: "message",
      role: "assistant",
      content: [{ type: "text", text: "turn 0" }],
      stop_reason: "end_turn",
    });
    const count = (await (await post(server, "/v1/messages/count_tokens", { messages: [] })).json()) as {
      input_tokens: unknown;
    };
    expect(Number.isInteger(count.input_tokens)).toBe(true);
    // count_tokens is not a turn: the next message is still turn 1.
    expect(await (await post(server, "/v1/messages", {})).json()).toMatchObject({
      content: [{ text: "turn 1" }],
    });
  });
});

describe("OpenAI Responses mock", () => {
  it("streams the Responses event sequence, each event named by its type", async () => {
    const server = await started(startResponsesMock());
    const stream = await events(await post(server, "/v1/responses", { stream: true, input: [{}, {}] }));
    expect(stream.map((e) => e.event)).toEqual([
      "response.created",
      "response.output_item.added",
      "response.output_text.delta",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(stream.every((e) => typeof e.data === "object" && e.data.type === e.event)).toBe(true);
    expect(stream[2]?.data).toMatchObject({ delta: "mock reply 0: received 2 input items" });
    const completed = stream[4]?.data as
      | { response: { status: string; output: unknown[]; usage: object } }
      | undefined;
    expect(completed?.response.status).toBe("completed");
    expect(completed?.response.output).toEqual([
      {
        type: "message",
        id: "msg_mock_0",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: "mock reply 0: received 2 input items", annotations: [] }],
      },
    ]);
    expect(completed?.response.usage).toMatchObject({ input_tokens: 10, output_tokens: 5, total_tokens: 15 });
  });

  it("answers with a function call, in a namespace when given, as Codex calls MCP tools", async () => {
    const server = await started(
      startResponsesMock({
        reply: () => ({
          functionCall: {
            name: "read_artifact",
            namespace: "mcp__stowage",
            arguments: { id: 0 },
            callId: "call_7",
          },
        }),
      }),
    );
    const stream = await events(await post(server, "/v1/responses", { stream: true, input: [] }));
    expect(stream.map((e) => e.event)).toEqual([
      "response.created",
      "response.output_item.added",
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    const call = {
      type: "function_call",
      id: "fc_mock_0",
      call_id: "call_7",
      name: "read_artifact",
      namespace: "mcp__stowage",
      arguments: '{"id":0}',
      status: "completed",
    };
    expect(stream[1]?.data).toMatchObject({ item: { ...call, arguments: "", status: "in_progress" } });
    expect(stream[3]?.data).toMatchObject({ item_id: "fc_mock_0", arguments: '{"id":0}' });
    expect(stream[5]?.data).toMatchObject({ response: { output: [call] } });
  });

  it("lists a model", async () => {
    const server = await started(startResponsesMock());
    expect(await (await fetch(`${server.url}/v1/models`)).json()).toMatchObject({
      object: "list",
      data: [{ id: "gpt-5" }],
    });
  });
});

describe("OpenAI chat completions mock", () => {
  it("streams chat.completion.chunk data lines and ends with [DONE]", async () => {
    const server = await started(startChatMock({ reply: () => "hello there" }));
    const stream = await events(await post(server, "/v1/chat/completions", { stream: true, messages: [] }));
    expect(stream.every((e) => e.event === undefined)).toBe(true);
    expect(stream.at(-1)?.data).toBe("[DONE]");
    const chunks = stream.slice(0, -1).map(
      (e) =>
        e.data as {
          object: string;
          choices: { delta: { content?: string }; finish_reason: string | null }[];
        },
    );
    expect(chunks.every((chunk) => chunk.object === "chat.completion.chunk")).toBe(true);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toBe("hello there");
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason)).toEqual([null, null, "stop"]);
  });

  it("answers with a tool call, streamed or not", async () => {
    const toolCall = { name: "stowage_read_artifact", arguments: { id: 0 }, id: "call_3" };
    const server = await started(startChatMock({ reply: () => ({ toolCall }) }));
    const stream = await events(await post(server, "/v1/chat/completions", { stream: true, messages: [] }));
    expect(stream.at(-1)?.data).toBe("[DONE]");
    const chunks = stream.slice(0, -1).map(
      (e) =>
        e.data as {
          choices: {
            delta: {
              tool_calls?: { index: number; id?: string; function: { name?: string; arguments: string } }[];
            };
            finish_reason: string | null;
          }[];
        },
    );
    const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    expect(calls[0]).toMatchObject({
      index: 0,
      id: "call_3",
      type: "function",
      function: { name: "stowage_read_artifact" },
    });
    expect(calls.map((call) => call.function.arguments).join("")).toBe('{"id":0}');
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("tool_calls");
    const whole = await (await post(server, "/v1/chat/completions", { messages: [] })).json();
    expect(whole).toMatchObject({
      choices: [
        {
          message: {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: "call_3",
                type: "function",
                function: { name: "stowage_read_artifact", arguments: '{"id":0}' },
              },
            ],
          },
          finish_reason: "tool_calls",
        },
      ],
    });
  });

  it("answers without stream as one chat.completion", async () => {
    const server = await started(startChatMock());
    const completion = await (
      await post(server, "/v1/chat/completions", { messages: [{ role: "user", content: "x" }] })
    ).json();
    expect(completion).toMatchObject({
      object: "chat.completion",
      choices: [
        {
          message: { role: "assistant", content: "mock reply 0: received 1 messages" },
          finish_reason: "stop",
        },
      ],
    });
  });
});

describe("every mock", () => {
  const mocks = [
    ["Anthropic", startAnthropicMock, "/v1/messages"],
    ["Responses", startResponsesMock, "/v1/responses"],
    ["chat", startChatMock, "/v1/chat/completions"],
  ] as const;

  describe.each(mocks)("%s", (_name, start, path) => {
    it("logs every request in order, the query string left out of the path", async () => {
      const server = await started(start());
      await post(server, `${path}?beta=true`, { marker: 1 });
      await fetch(`${server.url}/nowhere`);
      expect(server.requests).toEqual([
        { method: "POST", path, body: { marker: 1 } },
        { method: "GET", path: "/nowhere", body: undefined },
      ]);
    });

    // Hostile inputs: each is logged and answered, never crashes the server.
    it.each([
      ["a body that is not JSON", "{not json", 200],
      ["an empty body", "", 200],
      ["a JSON array body", "[1,2,3]", 200],
      ["a JSON null body", "null", 200],
    ])("answers %s with the default reply", async (_case, body, status) => {
      const server = await started(start());
      const response = await post(server, path, body);
      expect(response.status).toBe(status);
      await response.text();
      expect(server.requests).toHaveLength(1);
    });

    it.each([
      ["an unknown path", "POST", "/v1/other"],
      // Sent as written (fetch would normalize it): the literal path is not the endpoint's.
      ["a traversal path to the endpoint", "POST", `/v1/x/..${path.slice("/v1".length)}`],
      ["an encoded path", "POST", `/${path.slice(1).replaceAll("/", "%2F")}`],
      ["the right path with the wrong method", "DELETE", path],
    ])("answers %s with 404", async (_case, method, target) => {
      const server = await started(start());
      expect(await rawStatus(server, method, target)).toBe(404);
    });

    it("answers 413 to a body over 32 MiB and keeps serving", async () => {
      const server = await started(start());
      const response = await post(server, path, "x".repeat(32 * 1024 * 1024 + 1)).catch(() => undefined);
      // The server may cut the upload short; either way it did not log or answer it as a turn.
      if (response) expect(response.status).toBe(413);
      expect(server.requests).toHaveLength(0);
      expect((await post(server, path, {})).status).toBe(200);
    });

    it("answers 429 past maxRequests, still logging", async () => {
      const server = await started(start({ maxRequests: 2 }));
      const statuses: number[] = [];
      for (let i = 0; i < 3; i++) {
        const response = await post(server, path, { i });
        statuses.push(response.status);
        await response.text();
      }
      expect(statuses).toEqual([200, 200, 429]);
      expect(server.requests).toHaveLength(3);
    });

    it("listens on 127.0.0.1 only and stops on close", async () => {
      const server = await start();
      expect(new URL(server.url).hostname).toBe("127.0.0.1");
      await server.close();
      await expect(fetch(`${server.url}${path}`, { method: "POST", body: "{}" })).rejects.toThrow();
    });
  });
});
