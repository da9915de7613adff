import { createHash } from "node:crypto";
import { createMemoryObjectStore, StowageError } from "@stowage/core";
import { expectStowageError, recordingLogger } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { createBlobStore } from "../../src/blob-store.js";
import { resolveBlobRefs } from "../../src/persistence/resolve-refs.js";

const png = (fill: number) => Buffer.alloc(2000, fill).toString("base64");
const refOf = (base64: string) =>
  `blob:sha256:${createHash("sha256").update(Buffer.from(base64, "base64")).digest("hex")}`;

function recordingMessages() {
  const warnings: string[] = [];
  const warn = (first: Record<string, unknown> | string, message?: string) =>
    void warnings.push(typeof first === "string" ? first : (message ?? ""));
  return { warnings, logger: { warn } };
}

describe("resolveBlobRefs", () => {
  it("rehydrates refs in every supported shape and leaves the input alone", async () => {
    const blobs = createBlobStore({ store: createMemoryObjectStore() });
    const [a, b, c] = [png(1), png(2), png(3)];
    for (const data of [a, b, c]) await blobs.put(new Uint8Array(Buffer.from(data, "base64")));
    const entries = [
      { message: { content: [{ type: "image", mimeType: "image/png", data: refOf(a) }] } },
      {
        message: {
          content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: refOf(b) } }],
        },
      },
      { content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${refOf(c)}` } }] },
      { content: [{ type: "text", text: refOf(a) }] },
    ];
    const snapshot = structuredClone(entries);
    const resolved = await resolveBlobRefs(entries, { blobs });
    expect(resolved).toEqual([
      { message: { content: [{ type: "image", mimeType: "image/png", data: a }] } },
      {
        message: {
          content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: b } }],
        },
      },
      { content: [{ type: "image_url", image_url: { url: `data:image/png;base64,${c}` } }] },
      // A ref in ordinary text is not an image and stays as written.
      { content: [{ type: "text", text: refOf(a) }] },
    ]);
    expect(entries).toEqual(snapshot);
  });

  it("keeps the ref and warns when a blob is missing or corrupted, and goes on", async () => {
    const objects = createMemoryObjectStore();
    const blobs = createBlobStore({ store: objects });
    const good = png(5);
    await blobs.put(new Uint8Array(Buffer.from(good, "base64")));
    const corrupted = png(6);
    const stored = await blobs.put(new Uint8Array(Buffer.from(corrupted, "base64")));
    await objects.put(blobs.keyFor(stored.hash), new Uint8Array(10));
    const missing = refOf(png(7));
    const { warnings, logger } = recordingMessages();
    const resolved = await resolveBlobRefs(
      [
        {
          content: [
            { type: "image", data: missing },
            { type: "image", data: refOf(corrupted) },
            { type: "image", data: refOf(good) },
          ],
        },
      ],
      { blobs, logger },
    );
    expect(resolved[0]!.content.map((block) => block.data)).toEqual([missing, refOf(corrupted), good]);
    expect(warnings).toHaveLength(2);
    expect(warnings.join("\n")).toContain("missing");
    expect(warnings.join("\n")).toContain("corrupted");
  });

  it("warns to the blob store's logger when it is given no logger of its own", async () => {
    const { logger, warnings } = recordingLogger();
    const blobs = createBlobStore({ store: createMemoryObjectStore(), logger });
    const missing = `blob:sha256:${"0".repeat(64)}`;
    const entry = { content: [{ type: "image", data: missing }] };
    expect(await resolveBlobRefs([entry], { blobs })).toEqual([entry]);
    expect(warnings.map((warning) => warning.details)).toEqual([{ hash: "0".repeat(64) }]);
  });

  it("reads each distinct blob once, with bounded concurrency", async () => {
    const blobs = createBlobStore({ store: createMemoryObjectStore() });
    const images = Array.from({ length: 20 }, (_, i) => png(i));
    for (const data of images) await blobs.put(new Uint8Array(Buffer.from(data, "base64")));
    let inFlight = 0;
    let peak = 0;
    const reads: string[] = [];
    const counted = {
      async get(hash: string) {
        reads.push(hash);
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 2));
        inFlight--;
        return blobs.get(hash);
      },
    };
    const entries = [...images, ...images].map((data) => ({
      content: [{ type: "image", data: refOf(data) }],
    }));
    const resolved = await resolveBlobRefs(entries, { blobs: counted, concurrency: 3 });
    expect(resolved.map((entry) => entry.content[0]!.data)).toEqual([...images, ...images]);
    expect(reads).toHaveLength(20);
    expect(peak).toBe(3);
  });

  it("fails on errors other than a missing or corrupted blob", async () => {
    const failing = { get: async () => Promise.reject(new StowageError("UNAVAILABLE", "backend down")) };
    await expectStowageError(
      resolveBlobRefs([{ content: [{ type: "image", data: refOf(png(1)) }] }], {
        blobs: failing,
      }),
      "UNAVAILABLE",
    );
  });
});
