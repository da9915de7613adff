import { createMemoryObjectStore } from "@stowage/core";
import { seededRandom } from "@stowage/core/testing";
import { encodePng } from "@stowage/test-support";
import { beforeEach, describe, expect, it } from "vitest";
import { type BlobStore, createBlobStore } from "../../src/blob-store.js";
import { MAX_ENTRY_DEPTH } from "../../src/persistence/entry-walker.js";
import { prepareEntryForPersistence } from "../../src/persistence/prepare-entry.js";
import { resolveBlobRefs } from "../../src/persistence/resolve-refs.js";
import { TRUNCATION_NOTICE } from "../../src/persistence/truncate-string.js";

const LIMIT = 1000;
const NOTICE = `\n\n${TRUNCATION_NOTICE}`;
const silent = { warn: () => {} };
const random = seededRandom(7);
const png = encodePng(40, 30, () => [random() * 256, random() * 256, random() * 256]).toString("base64");
/** What a tool could print: 20,000 characters that are not base64 (spaces, `!`). */
const junk = "not base64 at all! ".repeat(1100).slice(0, 20_000);
/** Base64 of bytes that start with the PNG signature and go on as zeros: decodes, sniffs as PNG. */
const pngSignatureThenZeros = `iVBORw0KGgo${"A".repeat(20_001)}`;

type Outcome =
  | { kind: "cut"; to: string }
  | { kind: "kept whole" }
  | { kind: "externalized"; header: string };

/** The entry carrying `value`, and where to read it back in the prepared entry. */
type Placement = {
  entry: (value: string) => unknown;
  read: (prepared: unknown) => unknown;
};

const toolOutput: Placement = {
  entry: (value) => ({ type: "user", message: { content: [{ type: "tool_result", content: value }] } }),
  read: (prepared) =>
    (prepared as { message: { content: [{ content: string }] } }).message.content[0].content,
};
const codexImages: Placement = {
  entry: (value) => ({ type: "event_msg", payload: { type: "user_message", images: [value] } }),
  read: (prepared) => (prepared as { payload: { images: [string] } }).payload.images[0],
};
const imageBlock: Placement = {
  entry: (value) => ({ message: { content: [{ type: "image", data: value, mimeType: "image/png" }] } }),
  read: (prepared) => (prepared as { message: { content: [{ data: string }] } }).message.content[0].data,
};
const under = (...fields: string[]): Placement => ({
  entry: (value) =>
    fields.reduceRight<unknown>(
      (inner, field) => JSON.parse(`{${JSON.stringify(field)}:${JSON.stringify(inner)}}`),
      value,
    ),
  read: (prepared) =>
    fields.reduce<unknown>((outer, field) => (outer as Record<string, unknown>)[field], prepared),
});

/** An image block `levels` objects down a chain of `a` fields (built without recursion). */
const nestedBlock = (levels: number): Placement => ({
  entry: (value) => {
    let entry: unknown = { content: [{ type: "image", data: value, mimeType: "image/png" }] };
    for (let i = 0; i < levels; i++) entry = { a: entry };
    return entry;
  },
  read: (prepared) => {
    let object = prepared as { a: unknown };
    for (let i = 0; i < levels; i++) object = object.a as { a: unknown };
    return (object as unknown as { content: [{ data: string }] }).content[0].data;
  },
});

// Each row: what an attacker (or a misbehaving tool) writes, where, and what the line must hold.
// "cut" is the string rule: nothing passes the limit by looking like an image without being one.
const HOSTILE_ENTRIES: [string, Placement, string, Outcome][] = [
  [
    "an image data URL prefix before text that is not base64 (a tool output)",
    toolOutput,
    `data:image/png;base64,${junk}`,
    { kind: "cut", to: `data:image/png;base64,${junk.slice(0, LIMIT)}${NOTICE}` },
  ],
  [
    "the same prefix in upper case",
    toolOutput,
    `DATA:IMAGE/PNG;BASE64,${junk}`,
    { kind: "cut", to: `DATA:IMAGE/PNG;BASE64,${junk.slice(0, LIMIT)}${NOTICE}` },
  ],
  [
    "the prefix where Codex keeps attached images",
    codexImages,
    `data:image/png;base64,${junk}`,
    { kind: "cut", to: `data:image/png;base64,${junk.slice(0, LIMIT)}${NOTICE}` },
  ],
  [
    "text in an image block's data",
    imageBlock,
    junk,
    { kind: "cut", to: `${junk.slice(0, LIMIT)}${NOTICE}` },
  ],
  [
    "a PNG signature in base64 before text that is not base64",
    toolOutput,
    `iVBORw0KGgoAAAANSUhEUg${junk}`,
    { kind: "cut", to: `iVBORw0KGgoAAAANSUhEUg${junk.slice(0, LIMIT - 22)}${NOTICE}` },
  ],
  [
    "a data URL whose comma is past the longest header",
    toolOutput,
    `data:image/png;x=${"a".repeat(2000)};base64,${png}`,
    { kind: "cut", to: `data:image/png;x=${"a".repeat(LIMIT - 17)}${NOTICE}` },
  ],
  [
    "a small real image followed by 20,000 characters of text",
    toolOutput,
    `[{"type":"image","data":"${png}"}] ${junk}`,
    { kind: "cut", to: `[{"type":"image","data":"${png}"}] ${junk.slice(0, LIMIT - 29)}${NOTICE}` },
  ],
  [
    "base64 runs shorter than an image, many of them",
    toolOutput,
    `${"QUFB".repeat(200)} `.repeat(30),
    { kind: "cut", to: `${`${"QUFB".repeat(200)} `.repeat(30).slice(0, LIMIT)}${NOTICE}` },
  ],
  [
    "an image data URL under constructor / __proto__ keys",
    under("toolUseResult", "constructor", "__proto__"),
    `data:image/png;base64,${png}`,
    { kind: "externalized", header: "data:image/png;base64," },
  ],
  [
    "an image block 100 objects deep (within the walker's depth)",
    nestedBlock(100),
    png,
    { kind: "externalized", header: "" },
  ],
  [
    "an image block 10,000 objects deep (past the depth JSON.parse takes, not the stack of a walker)",
    nestedBlock(10_000),
    png,
    { kind: "kept whole" },
  ],
  // Residual, by design: base64 that decodes and starts like an image is image data as far as a
  // byte-level check can tell, so it is never cut; at a known image place it moves to the store.
  [
    "base64 that decodes and starts with a PNG signature, where no image is expected",
    toolOutput,
    pngSignatureThenZeros,
    { kind: "kept whole" },
  ],
  [
    "the same in an image data URL anywhere",
    under("debug", "frame"),
    `data:image/png;base64,${pngSignatureThenZeros}`,
    { kind: "externalized", header: "data:image/png;base64," },
  ],
];

describe("hostile entries for prepareEntryForPersistence", () => {
  let blobs: BlobStore;
  beforeEach(() => {
    blobs = createBlobStore({ store: createMemoryObjectStore() });
  });

  it.each(HOSTILE_ENTRIES)("%s", async (_why, placement, value, outcome) => {
    const prepared = await prepareEntryForPersistence(placement.entry(value), {
      blobs,
      logger: silent,
      maxStringChars: LIMIT,
    });
    const stored = placement.read(prepared);
    const blobCount = (await blobs.list()).items.length;
    switch (outcome.kind) {
      case "cut":
        expect(stored).toBe(outcome.to);
        expect(blobCount).toBe(0);
        break;
      case "kept whole":
        expect(stored).toBe(value);
        expect(blobCount).toBe(0);
        break;
      case "externalized":
        expect(stored).toMatch(
          new RegExp(`^${outcome.header.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}blob:sha256:[0-9a-f]{64}$`),
        );
        expect(blobCount).toBe(1);
        break;
    }
  });
});

describe("deeply nested entries", () => {
  it("are prepared and resolved without throwing: shallow images move, the part past the bound stays as it is", async () => {
    const blobs = createBlobStore({ store: createMemoryObjectStore() });
    const warnings: unknown[] = [];
    const logger = { warn: (details: unknown) => warnings.push(details) };
    const bottom = { content: [{ type: "image", data: png, mimeType: "image/png" }] };
    let chain: unknown = bottom;
    for (let i = 0; i < 10_000; i++) chain = { content: [chain] };
    const entry = { message: { content: [{ type: "image", data: png, mimeType: "image/png" }, chain] } };

    const prepared = await prepareEntryForPersistence(entry, { blobs, logger });
    const [shallow, deep] = prepared.message.content as [{ data: string }, unknown];
    expect(shallow.data).toMatch(/^blob:sha256:[0-9a-f]{64}$/);
    expect((await blobs.list()).items).toHaveLength(1);
    // Nothing changed below the shallow image: the chain is handed back as it is, the same objects,
    // its image (past the bound) not externalized.
    expect(deep).toBe(chain);
    expect(bottom.content[0]!.data).toBe(png);
    expect(warnings).toEqual([{ maxDepth: MAX_ENTRY_DEPTH }]);

    const [resolved] = await resolveBlobRefs([prepared], { blobs, logger });
    const [shallowBack, deepBack] = resolved!.message.content as [{ data: string }, unknown];
    expect(shallowBack.data).toBe(png);
    expect(deepBack).toBe(chain);
  });
});
