import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { afterAll } from "vitest";

/** A fetch-style handler, as `UploadService.handleUploadRequest` and storage-fs's direct URLs are. */
export type FetchHandler = (request: Request) => Promise<Response>;

function toRequest(req: IncomingMessage, origin: string, signal: AbortSignal): Request {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2)
    headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(new URL(req.url ?? "/", origin), {
    method: req.method ?? "GET",
    headers,
    signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: "half" } : {}),
  } as RequestInit);
}

async function send(response: Response, res: ServerResponse): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) {
    res.end();
    return;
  }
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) res.write(chunk);
  res.end();
}

/**
 * A tiny real HTTP server on 127.0.0.1 that hands every request to `handle` (the way an app
 * mounts the handler), closed after the test file's tests. `url` ends in `/`.
 */
export async function startFetchServer(handle: FetchHandler): Promise<{ url: string }> {
  let origin = "";
  const server = createServer((req, res) => {
    const controller = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) controller.abort();
    });
    handle(toRequest(req, origin, controller.signal))
      .then((response) => send(response, res))
      .catch((err: unknown) => {
        // The handlers under test never throw; a throw here is a test failure, shown as a 599.
        res.writeHead(599).end(String(err));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `${origin}/` };
}
