import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { StowageError } from "@stowage/core";
import { ARTIFACT_UPLOAD_URL_PATH, errorResponse } from "../../src/artifact-protocol.js";
import type { ArtifactUploads } from "../../src/artifact-uploads.js";

/** Largest JSON body the test API reads. */
const MAX_BODY_BYTES = 16 * 1024;

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > MAX_BODY_BYTES) throw new StowageError("TOO_LARGE", "request body is too large");
    chunks.push(chunk);
  }
  try {
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
    if (typeof body === "object" && body !== null && !Array.isArray(body))
      return body as Record<string, unknown>;
  } catch {
    // fall through to the error below
  }
  throw new StowageError("INVALID_INPUT", "request body must be a JSON object");
}

/**
 * The HTTP API of the seed, as a backend would serve it over `createArtifactUploads`: a real
 * node:http server for the agent-side tests. Routes: POST /agents/artifacts/upload-url,
 * GET /agents/:sessionId/artifacts, GET /agents/:sessionId/artifacts/:filename/download.
 */
export async function startArtifactServer(
  uploads: ArtifactUploads,
): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createServer(async (req, res) => {
    try {
      const path = new URL(req.url ?? "/", "http://localhost").pathname;
      const principal = await uploads.authenticate(req.headers.authorization);
      if (req.method === "POST" && path === ARTIFACT_UPLOAD_URL_PATH) {
        const body = await readJson(req);
        const grant = await uploads.requestUpload({
          principal,
          sessionId: body.agentSessionId as string,
          filename: body.filename as string,
          contentType: body.contentType as string,
          fileSize: body.fileSize as number,
          ...(body.sha256 === undefined ? {} : { sha256: body.sha256 as string }),
        });
        send(res, 200, grant);
        return;
      }
      const list = /^\/agents\/([^/]+)\/artifacts$/.exec(path);
      if (req.method === "GET" && list) {
        send(res, 200, { artifacts: await uploads.listArtifacts(principal, decodeURIComponent(list[1]!)) });
        return;
      }
      const download = /^\/agents\/([^/]+)\/artifacts\/([^/]+)\/download$/.exec(path);
      if (req.method === "GET" && download) {
        const sessionId = decodeURIComponent(download[1]!);
        send(res, 200, await uploads.requestDownload(principal, sessionId, decodeURIComponent(download[2]!)));
        return;
      }
      send(res, 404, { error: "no such route", code: "NOT_FOUND" });
    } catch (err) {
      const { status, body } = errorResponse(err);
      send(res, status, body);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    server,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
