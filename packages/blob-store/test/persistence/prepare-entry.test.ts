import { createHash } from "node:crypto";
import { createMemoryObjectStore, type ObjectStore, StowageError } from "@stowage/core";
import { expectStowageError, recordingLogger } from "@stowage/core/testing";
import fc from "fast-check";
import { beforeEach, describe, expect, it } from "vitest";
import { type BlobStore, createBlobStore } from "../../src/blob-store.js";
import {
  BLOB_EXTERNALIZE_THRESHOLD,
  prepareEntryForPersistence,
} from "../../src/persistence/prepare-entry.js";
import { resolveBlobRefs } from "../../src/persistence/resolve-refs.js";
import { TRUNCATION_NOTICE } from "../../src/persistence/truncate-string.js";
import { syntheticSession } from "../synthetic-session.js";

const NOTICE = `\n\n${TRUNCATION_NOTICE}`;
const silent = { warn: () => {} };

/** Canonical base64 of `n` decoded bytes. */
function base64Of(bytes: number, fill = 7): string {
  return Buffer.alloc(bytes, fill).toString("base64");
}
const refFor = (base64: string) =>
  `blob:sha256:${createHash("sha256").update(Buffer.from(base64, "base64")).digest("hex")}`;

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

describe("prepareEntryForPersistence", () => {
  let objects: ObjectStore;
  let blobs: BlobStore;

  beforeEach(() => {
    objects = createMemoryObjectStore();
    blobs = createBlobStore({ store: objects });
  });

  const prepare = <T>(entry: T, extra: { maxStringChars?: number; externalizeThreshold?: number } = {}) =>
    prepareEntryForPersistence(deepFreeze(entry), { blobs, logger: silent, ...extra });

  it("moves a pi image block's base64 to the blob store and stores its ref", async () => {
    const data = base64Of(3000);
    const entry = {
      type: "message",
      message: {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "image", mimeType: "image/png", data },
        ],
      },
    };
    const prepared = await prepare(entry);
    expect(prepared).toEqual({
      type: "message",
      message: {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "image", mimeType: "image/png", data: refFor(data) },
        ],
      },
    });
    expect(await blobs.get(refFor(data))).toEqual(new Uint8Array(Buffer.from(data, "base64")));
  });

  it("externalizes at exactly the threshold and not one character below", async () => {
    // 768 bytes encode to exactly 1,024 characters; 765 bytes to 1,020.
    const atThreshold = base64Of(768);
    const below = base64Of(765);
    expect(atThreshold.length).toBe(BLOB_EXTERNALIZE_THRESHOLD);
    const prepared = await prepare({
      content: [
        { type: "image", mimeType: "image/png", data: atThreshold },
        { type: "image", mimeType: "image/png", data: below },
      ],
    });
    expect(prepared.content[0]!.data).toBe(refFor(atThreshold));
    expect(prepared.content[1]!.data).toBe(below);
    const custom = await prepare(
      { content: [{ type: "image", data: below }] },
      { externalizeThreshold: 100 },
    );
    expect(custom.content[0]!.data).toBe(refFor(below));
  });

  it("handles Anthropic source blocks, nested tool_result content and data URLs", async () => {
    const a = base64Of(2000, 1);
    const b = base64Of(2000, 2);
    const c = base64Of(2000, 3);
    const d = base64Of(2000, 4);
    const prepared = await prepare({
      type: "user",
      message: {
        content: [
          { type: "image", source: { type: "base64", media_type: "image/jpeg", data: a } },
          {
            type: "tool_result",
            tool_use_id: "toolu_1",
            content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: b } }],
          },
          { type: "image_url", image_url: { url: `data:image/png;base64,${c}` } },
          { type: "input_image", image_url: `data:image/webp;base64,${d}` },
        ],
      },
    });
    expect(prepared.message.content).toEqual([
      { type: "image", source: { type: "base64", media_type: "image/jpeg", data: refFor(a) } },
      {
        type: "tool_result",
        tool_use_id: "toolu_1",
        content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: refFor(b) } }],
      },
      { type: "image_url", image_url: { url: `data:image/png;base64,${refFor(c)}` } },
      { type: "input_image", image_url: `data:image/webp;base64,${refFor(d)}` },
    ]);
    expect((await blobs.list()).items).toHaveLength(4);
  });

  it("leaves refs, text that is not base64 and images outside known places alone, and reports what it kept", async () => {
    const existing = refFor(base64Of(2000));
    const notBase64 = `${"A".repeat(2000)}!!`;
    const entry = {
      content: [
        { type: "image", data: existing },
        { type: "image", data: notBase64 },
        { type: "image_url", image_url: { url: `data:image/png;base64,${existing}` } },
      ],
      attachment: { type: "image", data: base64Of(3000) },
    };
    const { logger, warnings } = recordingLogger();
    expect(await prepareEntryForPersistence(deepFreeze(entry), { blobs, logger })).toEqual(entry);
    expect((await blobs.list()).items).toHaveLength(0);
    expect(warnings.map((warning) => warning.details)).toEqual([
      { reason: "not-base64", field: "data", chars: 2002, truncated: false },
    ]);
  });

  it("cuts strings over the limit without splitting a surrogate pair, and recounts lines", async () => {
    const long = "x".repeat(600_000);
    const emoji = `${"y".repeat(9)}😀${"z".repeat(10)}`; // the pair straddles character 10
    const prepared = await prepare(
      {
        content: [{ type: "text", text: long }],
        output: { content: "line\n".repeat(5), lineCount: 6 },
        emoji,
      },
      { maxStringChars: 10 },
    );
    expect(prepared.content[0]!.text).toBe(`xxxxxxxxxx${NOTICE}`);
    expect(prepared.emoji).toBe(`yyyyyyyyy${NOTICE}`);
    expect(prepared.output).toEqual({ content: `line\nline\n${NOTICE}`, lineCount: 5 });
    const defaults = await prepare({ text: long });
    expect(defaults.text).toBe(`${"x".repeat(500_000)}${NOTICE}`);
  });

  it("never truncates signed blocks, which providers verify byte for byte", async () => {
    const long = "t".repeat(50);
    const entry = {
      message: {
        content: [
          { type: "thinking", thinking: long, thinkingSignature: "sig" },
          { type: "thinking", thinking: long, signature: "sig" },
          { type: "redacted_thinking", data: long },
          { type: "reasoning", summary: long, encrypted_content: long },
          { type: "thinking", thinking: long },
        ],
      },
    };
    const prepared = await prepare(entry, { maxStringChars: 10 });
    const content = prepared.message.content as unknown as Record<string, string>[];
    expect(content.slice(0, 4)).toEqual(entry.message.content.slice(0, 4));
    expect(content[4]!.thinking).toBe(`tttttttttt${NOTICE}`);
  });

  it("drops transient streaming fields from the entry, its message and its blocks only", async () => {
    const prepared = await prepare({
      type: "message",
      jsonlEvents: [1],
      message: {
        role: "assistant",
        jsonlEvents: [2],
        content: [
          { type: "toolCall", name: "edit", arguments: { partialJson: "user data" }, partialJson: '{"pa' },
        ],
      },
    });
    expect(prepared).toEqual({
      type: "message",
      message: {
        role: "assistant",
        content: [{ type: "toolCall", name: "edit", arguments: { partialJson: "user data" } }],
      },
    });
  });

  it("returns only once the blobs are stored, and fails when storing fails", async () => {
    const data = base64Of(5000);
    const prepared = await prepare({ content: [{ type: "image", data }] });
    expect(await blobs.has(prepared.content[0]!.data)).toBe(true);

    const broken = createBlobStore({
      store: { ...objects, put: async () => Promise.reject(new StowageError("STORAGE_FULL", "disk full")) },
    });
    await expectStowageError(
      prepareEntryForPersistence(
        { content: [{ type: "image", data: base64Of(5000, 9) }] },
        { blobs: broken },
      ),
      "STORAGE_FULL",
    );
  });

  it("rejects bad limits", async () => {
    for (const options of [{ maxStringChars: 0 }, { maxStringChars: 1.5 }, { externalizeThreshold: -1 }]) {
      await expectStowageError(prepareEntryForPersistence({}, { blobs, ...options }), "INVALID_INPUT");
    }
  });

  it("round-trips a realistic session: prepare then resolve gives back every entry", async () => {
    const session = syntheticSession({ entries: 200, images: 12, imageBytes: [2000, 20_000] });
    const prepared = await Promise.all(session.map((entry) => prepare(entry)));
    const lines = prepared.map((entry) => JSON.stringify(entry));
    expect(lines.join("\n")).not.toMatch(/iVBORw0KGgo/); // no PNG base64 left inline
    expect(lines.join("\n")).not.toContain("partialJson");
    expect((await blobs.list()).items).toHaveLength(12);
    const restored = await resolveBlobRefs(
      lines.map((line) => JSON.parse(line)),
      { blobs, logger: silent },
    );
    const withoutTransient = JSON.parse(
      JSON.stringify(session, (key, value) =>
        key === "partialJson" || key === "jsonlEvents" ? undefined : value,
      ),
    );
    expect(restored).toEqual(withoutTransient);
  });

  it("property: resolve(prepare(entry)) equals the entry for any images and text", async () => {
    const imageBlock = fc.uint8Array({ minLength: 0, maxLength: 3000 }).map((bytes) => ({
      type: "image",
      mimeType: "image/png",
      data: Buffer.from(bytes).toString("base64"),
    }));
    const textBlock = fc.string({ maxLength: 200 }).map((text) => ({ type: "text", text }));
    const entry = fc.record({
      type: fc.constant("message"),
      message: fc.record({
        role: fc.constantFrom("user", "toolResult"),
        content: fc.array(fc.oneof(imageBlock, textBlock), { maxLength: 6 }),
      }),
    });
    await fc.assert(
      fc.asyncProperty(entry, async (original) => {
        const prepared = await prepareEntryForPersistence(original, { blobs });
        const [restored] = await resolveBlobRefs([JSON.parse(JSON.stringify(prepared))], {
          blobs,
          logger: silent,
        });
        expect(restored).toEqual(original);
      }),
      { numRuns: 150 },
    );
  });
});
