// An agent's workspace races the uploader: a worker thread swaps a directory of the path for a link
// out of the root and back, as fast as it can, while uploadFile({ root }) sends the file through
// that directory again and again to a real HTTP server. Whatever is refused or sent, not one byte
// of the file outside the root may reach the server.
import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { startDirectorySwapper, tempDirectory } from "@stowage/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uploadFile } from "../src/agent/index.js";
import { UPLOAD_COMPLETE_PATH } from "../src/protocol.js";

/** Bounds of the race: this many uploads, or this long, whichever ends first. */
const MAX_UPLOADS = 3_000;
const MAX_RACE_MS = 8_000;

const INSIDE = "workspace notes, fine to upload\n";
const OUTSIDE = "HOST SECRET, outside the upload root\n";

const base = await tempDirectory("stowage-upload-race-");

/** A server on 127.0.0.1 playing the API and storage: it grants every URL and keeps every PUT body. */
async function recordingServer() {
  const bodies: Buffer[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    const body = Buffer.concat(chunks);
    if (req.method === "PUT") {
      bodies.push(body);
      res.writeHead(200).end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    if (req.url?.endsWith(UPLOAD_COMPLETE_PATH)) {
      res.end(JSON.stringify({ filename: "notes.txt", size: 0, sizeFormatted: "0 B", lastModified: "" }));
      return;
    }
    const asked = JSON.parse(body.toString()) as { fileSize: number; sha256: string };
    res.end(
      JSON.stringify({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/storage/notes.txt`,
        key: "sessions/user/u/s1/artifacts/notes.txt",
        expiresIn: 900,
        headers: {
          "content-type": "text/plain",
          "content-length": String(asked.fileSize),
          "x-amz-checksum-sha256": Buffer.from(asked.sha256, "hex").toString("base64"),
        },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("uploadFile({ root }) against a directory swapped for a link", () => {
  let server: Awaited<ReturnType<typeof recordingServer>>;
  beforeAll(async () => {
    server = await recordingServer();
  });
  afterAll(() => server.close());

  it("never sends a byte of the file outside the root, over thousands of racing uploads", async () => {
    const root = join(base, "workspace");
    const outside = join(base, "outside");
    await mkdir(join(root, "sub"), { recursive: true });
    await mkdir(outside);
    await writeFile(join(root, "sub", "notes.txt"), INSIDE);
    await writeFile(join(outside, "notes.txt"), OUTSIDE);
    const outsideSha256 = createHash("sha256").update(OUTSIDE).digest("hex");

    const swapper = startDirectorySwapper({ directory: join(root, "sub"), outside });
    const outcomes = new Map<string, number>();
    let outsideHashed = 0;
    let uploads = 0;
    let swaps = 0;
    try {
      const until = Date.now() + MAX_RACE_MS;
      for (; uploads < MAX_UPLOADS && Date.now() < until; uploads++) {
        const result = await uploadFile({
          apiBase: server.url,
          apiKey: "stw_key",
          sessionId: "s1",
          root,
          filePath: "sub/notes.txt",
          retries: 0,
        });
        if (result.sha256 === outsideSha256) outsideHashed++;
        const outcome = result.success ? "sent" : `${result.code}/${result.reason}`;
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
    } finally {
      swaps = await swapper.stop();
      console.info(`${uploads} uploads, ${swaps} swaps:`, Object.fromEntries(outcomes));
    }
    const outsideSent = server.bodies.filter((body) => body.toString() === OUTSIDE).length;
    expect({ outsideSent, outsideHashed }).toEqual({ outsideSent: 0, outsideHashed: 0 });
    // Every body that did go out is the workspace's file.
    expect(server.bodies.every((body) => body.toString() === INSIDE)).toBe(true);
    expect(outcomes.get("sent") ?? 0).toBeGreaterThan(0);
    // It raced: the swapper ran, and some uploads met the link (else the test proves nothing).
    expect(swaps).toBeGreaterThan(0);
    expect(outcomes.get("FORBIDDEN/SYMLINK_REFUSED") ?? 0).toBeGreaterThan(0);
  });
});
