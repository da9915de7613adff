import type { FileHandle } from "node:fs/promises";
import { type ClientRequest, request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import { Readable } from "node:stream";
import { type ProgressListener, pipeFile } from "./file-body.js";

/** Statuses whose responses have no body; `Response` refuses one for them. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

function responseHeaders(headers: IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) out.append(name, one);
  }
  return out;
}

/** Writes `chunk` and resolves once the socket has taken it, so that its buffer may be reused. */
function writeChunk(req: ClientRequest, chunk: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    req.write(chunk, (err) => (err ? reject(err) : resolve()));
  });
}

/**
 * PUTs the first `size` bytes of an open file with node:http(s), with exactly `headers` (the
 * signed ones, content-length included), and answers a web `Response`. Chunks go out through
 * {@link pipeFile}'s two reused buffers, each reused only after the socket took it: a 50 MB file
 * costs two chunks of memory, not 50 MB of garbage waiting for a collection. Progress is told as
 * the socket takes each chunk. Network failures and aborts reject as node reports them.
 */
export function httpPut(
  url: string,
  headers: Record<string, string>,
  file: { handle: FileHandle; size: number },
  listener: ProgressListener | undefined,
  signal: AbortSignal,
): Promise<Response> {
  const target = new URL(url);
  const request = target.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<Response>((resolve, reject) => {
    // A connection of its own: nothing lingers in a shared pool after the upload.
    const req = request(target, { method: "PUT", headers, signal, agent: false });
    let answered = false;
    req.on("error", (err) => {
      if (!answered) reject(err);
    });
    req.on("response", (res) => {
      answered = true;
      const status = res.statusCode ?? 0;
      const body = NULL_BODY_STATUSES.has(status)
        ? null
        : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
      if (body === null) res.resume();
      resolve(
        new Response(body, {
          status,
          statusText: res.statusMessage ?? "",
          headers: responseHeaders(res.headers),
        }),
      );
    });
    let sent = 0;
    const tell = () => {
      try {
        listener?.onProgress({ filename: listener.filename, sentBytes: sent, totalBytes: file.size });
      } catch {
        // A broken progress display must not break the upload.
      }
    };
    tell();
    pipeFile(
      file.handle,
      file.size,
      async (chunk) => {
        await writeChunk(req, chunk);
        sent += chunk.byteLength;
        tell();
      },
      signal,
    ).then(
      () => req.end(),
      // Storage may answer (and close) before the whole body went out, e.g. a refused signature:
      // the answer counts then, not the broken write.
      (err: unknown) => req.destroy(err instanceof Error ? err : new Error(String(err))),
    );
  });
}
