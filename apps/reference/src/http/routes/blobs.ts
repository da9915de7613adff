import { StowageError, sniffImageType } from "@stowage/core";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Services } from "../../services.js";
import type { AppEnv } from "../context.js";
import { tooLarge } from "../limits.js";

/** Bytes looked at to tell an image's type. */
const SNIFF_BYTES = 16;

/**
 * `stream` again, its first chunk read ahead (at least {@link SNIFF_BYTES} when the blob has
 * them) so that its type can be told before anything is sent.
 */
async function peeked(stream: ReadableStream<Uint8Array>) {
  const reader = stream.getReader();
  const head: Uint8Array[] = [];
  let size = 0;
  let done = false;
  while (size < SNIFF_BYTES && !done) {
    const next = await reader.read();
    done = next.done;
    if (next.value) {
      head.push(next.value);
      size += next.value.byteLength;
    }
  }
  const first = Buffer.concat(head);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (first.byteLength > 0) controller.enqueue(new Uint8Array(first));
      if (done) controller.close();
    },
    async pull(controller) {
      const next = await reader.read();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return { first, body };
}

/**
 * The caller's content-addressed blobs: put bytes, get them back by hash or ref. Bytes are kept
 * once across principals, but a principal reads only blobs it stored. Reads stream (never the whole
 * blob in memory) and are verified against the hash: a corrupted blob breaks the stream off at its
 * end instead of completing it.
 */
export function blobRoutes(services: Services) {
  const app = new Hono<AppEnv>();

  app.post(
    "/blobs",
    bodyLimit({
      maxSize: services.config.uploadPolicy.maxFileSizeBytes,
      onError: tooLarge(services.config.uploadPolicy.maxFileSizeBytes),
    }),
    async (c) => {
      const body = c.req.raw.body;
      if (!body) throw new StowageError("INVALID_INPUT", "the blob's bytes must be the request body");
      const stored = await c.get("tenant").blobs.put(body, { signal: c.req.raw.signal });
      return c.json(stored, stored.created ? 201 : 200);
    },
  );

  app.get("/blobs/:id", async (c) => {
    const { blobs } = c.get("tenant");
    const id = c.req.param("id");
    const info = await blobs.stat(id, { signal: c.req.raw.signal });
    const stream = info && (await blobs.stream(id, { signal: c.req.raw.signal }));
    if (!info || !stream) throw new StowageError("NOT_FOUND", `no blob ${id}`);
    const { first, body } = await peeked(stream);
    // Blobs carry no type: images are shown, anything else goes out as a download.
    const type = sniffImageType(first) ?? "application/octet-stream";
    return new Response(body, {
      headers: {
        "content-type": type,
        "content-length": String(info.size),
        "cache-control": "private, max-age=31536000, immutable",
        "x-content-type-options": "nosniff",
        ...(type === "application/octet-stream" ? { "content-disposition": "attachment" } : {}),
      },
    });
  });
  return app;
}
