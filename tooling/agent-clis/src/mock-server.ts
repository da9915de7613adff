import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the mock received, in arrival order. */
export interface LoggedRequest {
  method: string;
  /** The path without the query string. */
  path: string;
  /** The JSON body parsed; the raw text when it is not JSON; `undefined` when empty. */
  body: unknown;
}

/** A running mock model server. */
export interface MockModelServer {
  /** `http://127.0.0.1:<port>`, without a trailing slash and without `/v1`. */
  readonly url: string;
  /** Every request received so far, bodies included; the test reads it after a run. */
  readonly requests: readonly LoggedRequest[];
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

export interface MockServerOptions {
  /** Requests beyond this many are answered 429 and not handled, so a looping client stops. Default 200. */
  maxRequests?: number;
}

/** Answers one logged request; `index` counts requests of every path, from 0. */
export type MockHandler = (request: LoggedRequest, response: ServerResponse, index: number) => void;

const DEFAULT_MAX_REQUESTS = 200;

/** The request bodies of agent CLIs stay small; this bounds what a runaway client can make us hold. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

/** Starts an HTTP server on 127.0.0.1 (a free port) that logs every request and hands it to `handle`. */
export async function startMockServer(
  handle: MockHandler,
  options: MockServerOptions = {},
): Promise<MockModelServer> {
  const maxRequests = options.maxRequests ?? DEFAULT_MAX_REQUESTS;
  const requests: LoggedRequest[] = [];
  const server = createServer((incoming, response) => {
    readBody(incoming).then(
      (text) => {
        const logged: LoggedRequest = {
          method: incoming.method ?? "GET",
          path: (incoming.url ?? "/").split("?")[0] ?? "/",
          body: parseBody(text),
        };
        const index = requests.length;
        requests.push(logged);
        if (index >= maxRequests) {
          sendJson(response, 429, {
            error: { type: "rate_limit_error", message: "mock request limit reached" },
          });
          return;
        }
        try {
          handle(logged, response, index);
        } catch (error) {
          sendJson(response, 500, { error: { type: "api_error", message: String(error) } });
        }
      },
      () => sendJson(response, 413, { error: { type: "invalid_request_error", message: "body too large" } }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function readBody(incoming: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    incoming.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error("body too large"));
        incoming.destroy();
        return;
      }
      chunks.push(chunk);
    });
    incoming.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    incoming.on("error", reject);
  });
}

function parseBody(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Sends a JSON answer. */
export function sendJson(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { "content-type": "application/json" });
  response.end(JSON.stringify(value));
}

/** Sends server-sent events, each as `event: <name>` (when given) and one `data:` line, then ends. */
export function sendEvents(
  response: ServerResponse,
  events: readonly { event?: string; data: unknown }[],
): void {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const { event, data } of events) {
    const payload = typeof data === "string" ? data : JSON.stringify(data);
    response.write(`${event === undefined ? "" : `event: ${event}\n`}data: ${payload}\n\n`);
  }
  response.end();
}

/** True when any logged request's body contains `text` (searched in its JSON form). */
export function requestsMention(requests: readonly LoggedRequest[], text: string): boolean {
  return requests.some((request) => JSON.stringify(request.body ?? "").includes(text));
}
