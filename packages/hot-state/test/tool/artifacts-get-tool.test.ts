import { type BlobStore, createBlobStore } from "@stowage/blob-store";
import { createMemoryObjectStore } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { beforeEach, describe, expect, it } from "vitest";
import { type ContentRegistry, createContentRegistry } from "../../src/content/content-registry.js";
import {
  type ArtifactsGetResult,
  createArtifactsGetTool,
  DEFAULT_TOOL_MAX_CHARS,
  toAnthropicTool,
} from "../../src/tool/artifacts-get-tool.js";
import { captureLogger } from "../capture-logger.js";
import { HOSTILE_CONTENT_IDS } from "../hostile-ids.js";

let blobs: BlobStore;
let registry: ContentRegistry;
beforeEach(() => {
  blobs = createBlobStore({ store: createMemoryObjectStore() });
  registry = createContentRegistry({
    content: blobs,
    records: createMemoryObjectStore(),
    logger: captureLogger(),
  });
});

const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

/** Reads every page of an artifact, checking that no page holds half a surrogate pair. */
async function readAllPages(tool: ReturnType<typeof createArtifactsGetTool>, id: string) {
  const pages: ArtifactsGetResult[] = [];
  let offset: number | null = 0;
  while (offset !== null) {
    const page: ArtifactsGetResult = await tool.execute({ artifact_id: id, offset });
    const { content } = page;
    if (content.length > 0) {
      expect(isLow(content.charCodeAt(0))).toBe(false);
      expect(isHigh(content.charCodeAt(content.length - 1))).toBe(false);
    }
    pages.push(page);
    offset = page.next_offset;
  }
  return pages;
}

describe("artifacts_get tool definition", () => {
  it("has a name both providers accept and a strict JSON Schema input", () => {
    const tool = createArtifactsGetTool({ registry });
    expect(tool.name).toBe("artifacts_get");
    expect(tool.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(tool.description).toContain(String(DEFAULT_TOOL_MAX_CHARS));
    expect(tool.inputSchema).toEqual({
      type: "object",
      properties: {
        artifact_id: { type: "string", pattern: "^[a-f0-9]{64}$", description: expect.any(String) },
        offset: {
          type: "integer",
          minimum: 0,
          maximum: Number.MAX_SAFE_INTEGER,
          description: expect.any(String),
        },
      },
      required: ["artifact_id"],
      additionalProperties: false,
    });
    expect(JSON.parse(JSON.stringify(tool.inputSchema))).toEqual(tool.inputSchema);
  });

  it("converts to the Anthropic tool format", () => {
    const tool = createArtifactsGetTool({ registry });
    expect(toAnthropicTool(tool)).toEqual({
      name: "artifacts_get",
      description: tool.description,
      input_schema: tool.inputSchema,
    });
  });

  it("refuses a bad page size or a missing registry", async () => {
    for (const maxChars of [0, 15, 1.5, "8000"]) {
      await expectStowageError(
        () => createArtifactsGetTool({ registry, maxChars: maxChars as number }),
        "INVALID_INPUT",
      );
    }
    await expectStowageError(() => createArtifactsGetTool({} as never), "INVALID_INPUT");
    await expectStowageError(() => createArtifactsGetTool(undefined as never), "INVALID_INPUT");
  });
});

describe("artifacts_get execution", () => {
  it("returns metadata and the whole content when it fits one page", async () => {
    const { record } = await registry.storeText("small", { summary: "tiny", producer: "planner" });
    const result = await createArtifactsGetTool({ registry }).execute({ artifact_id: record.artifact_id });
    expect(result).toEqual({
      artifact_id: record.artifact_id,
      type: "doc",
      mime: "text/plain; charset=utf-8",
      summary: "tiny",
      producer: "planner",
      size_bytes: 5,
      content_hash: record.artifact_id,
      created_at: record.created_at,
      encoding: "utf-8",
      total_chars: 5,
      offset: 0,
      next_offset: null,
      truncated: false,
      content: "small",
    });
  });

  it("bounds content at 8,000 characters and pages on with offset", async () => {
    const text = "x".repeat(20_000);
    const { record } = await registry.storeText(text);
    const tool = createArtifactsGetTool({ registry });
    const pages = await readAllPages(tool, record.artifact_id);
    expect(pages.map((page) => [page.offset, page.content.length, page.next_offset, page.truncated])).toEqual(
      [
        [0, 8000, 8000, true],
        [8000, 8000, 16000, true],
        [16000, 4000, null, false],
      ],
    );
    expect(pages.map((page) => page.content).join("")).toBe(text);
  });

  it("never splits a surrogate pair, whatever the page size and where the emoji fall", async () => {
    const text = Array.from({ length: 3000 }, (_, i) =>
      i % 3 === 0 ? "😀" : i % 7 === 0 ? "𝄞x" : "ab",
    ).join("");
    const { record } = await registry.storeText(text);
    for (const maxChars of [16, 17, 31, 100, 999, 8000]) {
      const pages = await readAllPages(createArtifactsGetTool({ registry, maxChars }), record.artifact_id);
      expect(pages.map((page) => page.content).join("")).toBe(text);
      for (const page of pages) expect(page.content.length).toBeLessThanOrEqual(maxChars);
    }
  });

  it("starts a hand-made offset inside a pair at the pair", async () => {
    const { record } = await registry.storeText("a😀b");
    const page = await createArtifactsGetTool({ registry }).execute({
      artifact_id: record.artifact_id,
      offset: 2,
    });
    expect(page.offset).toBe(1);
    expect(page.content).toBe("😀b");
  });

  it("reports binary content without decoding it", async () => {
    const { record } = await registry.storeBytes(new Uint8Array([0xff, 0xfe, 0x00]));
    const page = await createArtifactsGetTool({ registry }).execute({ artifact_id: record.artifact_id });
    expect(page).toMatchObject({
      encoding: "binary",
      content: "",
      total_chars: 0,
      next_offset: null,
      size_bytes: 3,
    });
  });

  it("fails with NOT_FOUND for an id never stored and INTEGRITY for corrupted content", async () => {
    const tool = createArtifactsGetTool({ registry });
    await expectStowageError(tool.execute({ artifact_id: "0".repeat(64) }), "NOT_FOUND");
    const { record } = await registry.storeText("intact");
    await blobs.objects.put(blobs.keyFor(record.artifact_id), new TextEncoder().encode("rotten"));
    await expectStowageError(tool.execute({ artifact_id: record.artifact_id }), "INTEGRITY");
  });

  it.each(HOSTILE_CONTENT_IDS)("refuses the artifact_id $why with INVALID_INPUT", async ({ value }) => {
    await expectStowageError(
      createArtifactsGetTool({ registry }).execute({ artifact_id: value }),
      "INVALID_INPUT",
    );
  });

  it.each([
    [{ offset: -1 }, "a negative offset"],
    [{ offset: 1.5 }, "a fractional offset"],
    [{ offset: "0" }, "a string offset"],
    [{ offset: 6 }, "an offset past the end"],
    [{ path: "../etc/passwd" }, "an extra property"],
  ])("refuses %j (%s) with INVALID_INPUT", async (extra, _why) => {
    const { record } = await registry.storeText("hello");
    const tool = createArtifactsGetTool({ registry });
    await expectStowageError(tool.execute({ artifact_id: record.artifact_id, ...extra }), "INVALID_INPUT");
  });

  it("refuses input that is not an object", async () => {
    const tool = createArtifactsGetTool({ registry });
    for (const input of [null, "id", 42, []]) await expectStowageError(tool.execute(input), "INVALID_INPUT");
  });

  it("accepts offset equal to the length (an empty last page)", async () => {
    const { record } = await registry.storeText("hello");
    const page = await createArtifactsGetTool({ registry }).execute({
      artifact_id: record.artifact_id,
      offset: 5,
    });
    expect(page).toMatchObject({ content: "", next_offset: null, truncated: false });
  });
});
