import { StowageError } from "@stowage/core";
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Services } from "../../services.js";
import { type AppEnv, requireKey } from "../context.js";
import { tooLarge } from "../limits.js";

/** Image formats told from their first bytes, for serving blobs (which have no stored type). */
const SIGNATURES: [string, number[]][] = [
  ["image/png", [0x89, 0x50, 0x4e, 0x47]],
  ["image/jpeg", [0xff, 0xd8, 0xff]],
  ["image/gif", [0x47, 0x49, 0x46, 0x38]],
];

function sniffType(bytes: Uint8Array): string {
  for (const [type, magic] of SIGNATURES) if (magic.every((byte, i) => bytes[i] === byte)) return type;
  const isWebp = bytes[0] === 0x52 && bytes[1] === 0x49 && bytes[8] === 0x57 && bytes[9] === 0x45;
  return isWebp ? "image/webp" : "application/octet-stream";
}

/** Content-addressed blobs: put bytes, get them back (verified) by hash or ref. */
export function blobRoutes(services: Services) {
  const app = new Hono<AppEnv>();
  app.use("/blobs", requireKey(services));
  app.use("/blobs/*", requireKey(services));

  app.post(
    "/blobs",
    bodyLimit({
      maxSize: services.config.artifactMaxFileBytes,
      onError: tooLarge(services.config.artifactMaxFileBytes),
    }),
    async (c) => {
      const body = c.req.raw.body;
      if (!body) throw new StowageError("INVALID_INPUT", "the blob's bytes must be the request body");
      const stored = await services.blobs.put(body, { signal: c.req.raw.signal });
      return c.json(stored, stored.created ? 201 : 200);
    },
  );

  app.get("/blobs/:id", async (c) => {
    const bytes = await services.blobs.get(c.req.param("id"), { signal: c.req.raw.signal });
    if (!bytes) throw new StowageError("NOT_FOUND", `no blob ${c.req.param("id")}`);
    const type = sniffType(bytes);
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
      "content-type": type,
      "cache-control": "private, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
      ...(type === "application/octet-stream" ? { "content-disposition": "attachment" } : {}),
    });
  });
  return app;
}
