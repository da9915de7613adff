import { contentDisposition, isSha256Hex, StowageError, sniffImageType } from "@stowage/core";
import { Hono } from "hono";
import {
  createStoredSessionReader,
  type StoredSession,
  storedSessionFile,
} from "../../stored-sessions/stored-session-reader.js";
import { type AppContext, type AppEnv, integerQuery } from "../context.js";

/**
 * The caller's latest live stored session of the id in the path (404 when it has none), with the
 * caller's blobs, where a capture kept as chunks is read from.
 */
async function storedRecord(c: AppContext): Promise<StoredSession> {
  const sessionId = c.req.param("sessionId")!;
  const tenant = c.get("tenant");
  const record = await tenant.sessionBlobs.getBySessionId(sessionId, { signal: c.req.raw.signal });
  if (!record) throw new StowageError("NOT_FOUND", `no live stored session ${sessionId}`);
  return { record, blobs: tenant.blobs };
}

/** A query parameter the route needs. */
function requiredQuery(c: AppContext, name: string): string {
  const value = c.req.query(name);
  if (value === undefined || value === "") {
    throw new StowageError("INVALID_INPUT", `give the ${name} query parameter`);
  }
  return value;
}

const downloadHeaders = (type: string, path: string) => ({
  "content-type": type,
  "content-disposition": contentDisposition("attachment", path.slice(path.lastIndexOf("/") + 1)),
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
});

/**
 * A stored session read as it was captured (the caller's own, latest live record of the id):
 * its files and transcripts, each transcript as a thread through thread-items' adapters in pages,
 * an item whole, an image found in it, and any file's original bytes as a download.
 */
export function storedSessionReaderRoutes() {
  const app = new Hono<AppEnv>();
  const reader = createStoredSessionReader();

  app.get("/session-blobs/:sessionId/transcripts", async (c) =>
    c.json(await reader.outline(await storedRecord(c), c.req.raw.signal)),
  );

  app.get("/session-blobs/:sessionId/transcript", async (c) => {
    const cursor = c.req.query("cursor");
    const limit = integerQuery(c, "limit");
    return c.json(
      await reader.page(await storedRecord(c), requiredQuery(c, "path"), {
        ...(cursor === undefined ? {} : { cursor }),
        ...(limit === undefined ? {} : { limit }),
        signal: c.req.raw.signal,
      }),
    );
  });

  app.get("/session-blobs/:sessionId/transcript/item", async (c) => {
    const item = await reader.item(
      await storedRecord(c),
      requiredQuery(c, "path"),
      requiredQuery(c, "id"),
      c.req.raw.signal,
    );
    return c.json({ item });
  });

  // An image the transcript held inline (moved out to a ref for the page), else a blob of the
  // caller's that the transcript names by ref; only images are answered.
  app.get("/session-blobs/:sessionId/transcript/images/:hash", async (c) => {
    const hash = c.req.param("hash");
    if (!isSha256Hex(hash))
      throw new StowageError("INVALID_INPUT", "the image is named by its SHA-256, 64 lowercase hex");
    const stored = await storedRecord(c);
    const bytes =
      (await reader.image(stored, requiredQuery(c, "path"), hash, c.req.raw.signal)) ??
      (await c.get("tenant").blobs.get(hash, { signal: c.req.raw.signal }));
    const type = bytes ? sniffImageType(bytes.subarray(0, 16)) : undefined;
    if (!bytes || !type)
      throw new StowageError("NOT_FOUND", `no image ${hash} in stored session ${stored.record.sessionId}`);
    return new Response(bytes, {
      headers: {
        "content-type": type,
        "content-length": String(bytes.byteLength),
        "cache-control": "private, max-age=3600",
        "x-content-type-options": "nosniff",
      },
    });
  });

  // One file as the agent wrote it: the original, byte for byte, as a download.
  app.get("/session-blobs/:sessionId/files", async (c) => {
    const path = requiredQuery(c, "path");
    const bytes = await storedSessionFile(await storedRecord(c), path, c.req.raw.signal);
    return new Response(bytes, {
      headers: {
        ...downloadHeaders("application/octet-stream", path),
        "content-length": String(bytes.byteLength),
      },
    });
  });
  return app;
}
