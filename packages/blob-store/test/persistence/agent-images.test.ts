import { createHash } from "node:crypto";
import { createMemoryObjectStore } from "@stowage/core";
import { seededRandom } from "@stowage/core/testing";
import { encodePng } from "@stowage/test-support";
import fc from "fast-check";
import { beforeEach, describe, expect, it } from "vitest";
import { type BlobStore, createBlobStore } from "../../src/blob-store.js";
import { prepareEntryForPersistence } from "../../src/persistence/prepare-entry.js";
import { resolveBlobRefs } from "../../src/persistence/resolve-refs.js";
import { TRUNCATION_NOTICE } from "../../src/persistence/truncate-string.js";

// Real, decodable PNGs: noise does not compress, so the size is about 3 bytes per pixel.
function noisePng(width: number, height: number, seed: number): Buffer {
  const random = seededRandom(seed);
  return encodePng(width, height, () => [random() * 256, random() * 256, random() * 256]);
}
const screenshot = noisePng(48, 32, 1);
const canonical = screenshot.toString("base64");
const ref = `blob:sha256:${createHash("sha256").update(screenshot).digest("hex")}`;

/** What base64 looks like when a tool wraps it at 76 columns (MIME). */
const wrapped = (base64: string, newline: string) => base64.match(/.{1,76}/g)!.join(newline);
const urlSafe = (base64: string) => base64.replaceAll("+", "-").replaceAll("/", "_");
const unpadded = (base64: string) => base64.replace(/=+$/, "");

function recordingLogger() {
  const warnings: Record<string, unknown>[] = [];
  return {
    warnings,
    logger: {
      warn: (details: Record<string, unknown> | string) =>
        void warnings.push(details as Record<string, unknown>),
    },
  };
}

describe("image payloads as real agents write them", () => {
  let blobs: BlobStore;
  beforeEach(() => {
    blobs = createBlobStore({ store: createMemoryObjectStore() });
  });

  it("the screenshot is a real PNG whose base64 has padding, `+` and `/` (so every form below differs)", () => {
    expect(screenshot.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(canonical).toMatch(/=$/);
    expect(canonical).toMatch(/\+/);
    expect(canonical).toMatch(/\//);
    expect(canonical.length).toBeGreaterThan(76 * 3);
  });

  it.each<[string, string]>([
    ["line-wrapped with \\n", wrapped(canonical, "\n")],
    ["line-wrapped with \\r\\n (MIME)", wrapped(canonical, "\r\n")],
    ["URL-safe", urlSafe(canonical)],
    ["unpadded", unpadded(canonical)],
    ["URL-safe, unpadded and wrapped", wrapped(unpadded(urlSafe(canonical)), "\n")],
  ])("externalizes base64 %s, and resolves it to the canonical base64 of the same bytes", async (_, data) => {
    // A pi tool result, as pi's read tool writes an image.
    const entry = {
      type: "message",
      id: "a1b2c3d4",
      message: {
        role: "toolResult",
        toolCallId: "toolu_01",
        toolName: "read",
        content: [{ type: "image", data, mimeType: "image/png" }],
      },
    };
    const prepared = await prepareEntryForPersistence(entry, { blobs });
    expect(prepared.message.content[0]!.data).toBe(ref);
    expect(Buffer.from((await blobs.get(ref))!)).toEqual(screenshot);
    const [resolved] = await resolveBlobRefs([prepared], { blobs });
    expect(resolved!.message.content[0]!.data).toBe(canonical);
  });

  it("keeps the parameters of a data URL and moves only the payload", async () => {
    const url = `data:image/png;charset=utf-8;name=shot.png;base64,${canonical}`;
    const entry = {
      type: "response_item",
      payload: { type: "message", role: "user", content: [{ type: "input_image", image_url: url }] },
    };
    const prepared = await prepareEntryForPersistence(entry, { blobs });
    expect(prepared.payload.content[0]!.image_url).toBe(
      `data:image/png;charset=utf-8;name=shot.png;base64,${ref}`,
    );
    expect(await resolveBlobRefs([prepared], { blobs })).toEqual([entry]);
  });

  it("moves Claude Code's toolUseResult.file.base64 (the Read tool's second copy of an image)", async () => {
    // A Claude Code 2.0 user record for a Read of a PNG: the image is in the tool_result and again
    // in toolUseResult.
    const entry = {
      parentUuid: "9f7b91e7-29f6-4172-a351-9841a55fdd0c",
      isSidechain: false,
      userType: "external",
      cwd: "/repo",
      sessionId: "3fe1b6bc-dbd0-4320-b980-4f147befa187",
      version: "2.0.76",
      type: "user",
      message: {
        role: "user",
        content: [
          {
            tool_use_id: "toolu_bdrk_01JkUuo7ijGXyoaci6DMTimh",
            type: "tool_result",
            content: [
              { type: "image", source: { type: "base64", data: canonical, media_type: "image/png" } },
            ],
          },
        ],
      },
      uuid: "e639b996-aa2b-4233-be6d-7ae64e196d7f",
      timestamp: "2026-01-02T15:27:18.310Z",
      toolUseResult: {
        type: "image",
        file: { base64: canonical, type: "image/png", originalSize: screenshot.byteLength },
      },
    };
    const prepared = await prepareEntryForPersistence(entry, { blobs });
    expect(prepared.toolUseResult.file.base64).toBe(ref);
    expect(prepared.message.content[0]!.content[0]!.source.data).toBe(ref);
    expect((await blobs.list()).items).toHaveLength(1);
    expect(await resolveBlobRefs([prepared], { blobs })).toEqual([entry]);
  });

  it("moves the images of a Claude Code MCP tool result, whose toolUseResult is the tool's block array (2.1.330)", async () => {
    // Shaped as Claude Code 2.1.330 wrote a real MCP screenshot result here (a stdio MCP server
    // answering tools/call with a text and an image item): the tool_result content and
    // toolUseResult are both the array of blocks, the image as an Anthropic base64 source.
    const blocks = [
      { type: "text", text: "Screenshot of the page" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: canonical } },
      {
        type: "text",
        text: "[Image: source: /home/u/.claude/projects/-w/4c290578-47a8-40a1-9fdc-499d2bda01ca/tool-results/mcp-shot-blob-1795689546809-y5kaic.png]",
      },
    ];
    const entry = {
      parentUuid: "c3d8017f-a6ec-4644-aeee-03e09dc4a376",
      isSidechain: false,
      promptId: "05fbb3d4-da23-4d23-8371-6bb3e2bdbc44",
      type: "user",
      message: {
        role: "user",
        content: [{ tool_use_id: "toolu_01Rk2mVb8xQ4nT7yLc3ZaP9e", type: "tool_result", content: blocks }],
      },
      uuid: "6ba4dbde-320b-4d64-a49c-bb258cbc1be9",
      timestamp: "2026-11-26T10:39:06.824Z",
      toolUseResult: blocks,
      mcpCallNotReadOnly: "no_hint",
      sourceToolAssistantUUID: "c3d8017f-a6ec-4644-aeee-03e09dc4a376",
      userType: "external",
      entrypoint: "sdk-cli",
      cwd: "/w",
      sessionId: "4c290578-47a8-40a1-9fdc-499d2bda01ca",
      version: "2.1.330",
      gitBranch: "HEAD",
    };
    const prepared = await prepareEntryForPersistence(entry, { blobs });
    expect(prepared.toolUseResult[1]).toEqual({
      type: "image",
      source: { type: "base64", media_type: "image/png", data: ref },
    });
    expect(prepared.message.content[0]!.content[1]!.source!.data).toBe(ref);
    expect(prepared.toolUseResult[2]).toBe(entry.toolUseResult[2]);
    expect(JSON.stringify(prepared)).not.toContain(canonical.slice(0, 100));
    expect((await blobs.list()).items).toHaveLength(1);
    expect(await resolveBlobRefs([prepared], { blobs })).toEqual([entry]);
  });

  it("moves the same array in the Agent SDK's tool_use_result, with MCP's own image item shape", async () => {
    const entry = {
      type: "user",
      message: {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_9", content: "see result" }],
      },
      parent_tool_use_id: null,
      tool_use_result: [{ type: "image", data: canonical, mimeType: "image/png" }],
      session_id: "7c612142-8bc2-4df7-8d91-6601c1ce4a61",
    };
    const prepared = await prepareEntryForPersistence(entry, { blobs });
    expect(prepared.tool_use_result).toEqual([{ type: "image", data: ref, mimeType: "image/png" }]);
    expect(await resolveBlobRefs([prepared], { blobs })).toEqual([entry]);
  });

  it("moves a PDF Claude Code read (document block and toolUseResult.file.base64, 2.1.330), never cutting it", async () => {
    const pdf = Buffer.concat([
      Buffer.from("%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"),
      screenshot,
    ]);
    const base64 = pdf.toString("base64");
    const pdfRef = `blob:sha256:${createHash("sha256").update(pdf).digest("hex")}`;
    // As Claude Code 2.1.330 wrote the Read of a PDF here.
    const entry = {
      type: "user",
      message: {
        role: "user",
        content: [
          {
            tool_use_id: "toolu_mock_0",
            type: "tool_result",
            content: [
              { type: "text", text: `PDF file read: /w/doc.pdf (${pdf.byteLength} bytes)` },
              { type: "document", source: { type: "base64", media_type: "application/pdf", data: base64 } },
            ],
          },
        ],
      },
      toolUseResult: {
        type: "pdf",
        file: { filePath: "/w/doc.pdf", base64, originalSize: pdf.byteLength },
      },
      version: "2.1.330",
    };
    const { warnings, logger } = recordingLogger();
    // A string limit below the PDF's size: the document moves instead of being cut.
    const prepared = await prepareEntryForPersistence(entry, { blobs, logger, maxStringChars: 1000 });
    expect(prepared.message.content[0]!.content[1]!.source).toEqual({
      type: "base64",
      media_type: "application/pdf",
      data: pdfRef,
    });
    expect(prepared.toolUseResult.file.base64).toBe(pdfRef);
    expect(JSON.stringify(prepared)).not.toContain(TRUNCATION_NOTICE);
    expect(warnings).toEqual([]);
    expect(Buffer.from((await blobs.get(pdfRef))!)).toEqual(pdf);
    expect(await resolveBlobRefs([prepared], { blobs })).toEqual([entry]);
  });

  it("moves an OpenAI input_file's data URL (a PDF given to the Responses API)", async () => {
    const entry = {
      type: "response_item",
      payload: {
        type: "message",
        role: "user",
        content: [
          { type: "input_file", filename: "doc.pdf", file_data: `data:application/pdf;base64,${canonical}` },
        ],
      },
    };
    const prepared = await prepareEntryForPersistence(entry, { blobs });
    expect(prepared.payload.content[0]!.file_data).toBe(`data:application/pdf;base64,${ref}`);
    expect(await resolveBlobRefs([prepared], { blobs })).toEqual([entry]);
  });

  it.each([
    ["an upper-case marker", "data:image/png;BASE64,"],
    ["an upper-case scheme and type", "DATA:IMAGE/PNG;base64,"],
    ["a space after the semicolon", "data:image/png; base64,"],
  ])(
    "reads a data URL with %s (WHATWG: case-insensitive) and keeps its header as written",
    async (_, header) => {
      const entry = {
        type: "event_msg",
        payload: { type: "user_message", message: "look", images: [header + canonical] },
        // Any string that is a whole image data URL, wherever it is.
        extra: { frame: header + canonical },
      };
      const { warnings, logger } = recordingLogger();
      const prepared = await prepareEntryForPersistence(entry, { blobs, logger, maxStringChars: 1000 });
      expect(prepared.payload.images).toEqual([header + ref]);
      expect(prepared.extra.frame).toBe(header + ref);
      expect(warnings).toEqual([]);
      expect(await resolveBlobRefs([prepared], { blobs })).toEqual([entry]);
    },
  );

  it("keeps an image embedded in a Codex MCP output text whole; the text around it is what counts and gets cut", async () => {
    // Codex 0.128 writes an MCP tool's output as text: a `Wall time` header, then the content
    // items as JSON (real file, the first mcp__node_repl__js result). An image item in it
    // cannot become a ref (no loader resolves refs inside text), so it stays, whole.
    const items = JSON.stringify([
      { type: "text", text: "Captured the page" },
      { type: "image", data: canonical, mimeType: "image/png" },
    ]);
    const output = `Wall time: 1.8333 seconds\nOutput:\n${items}`;
    const entry = {
      timestamp: "2026-05-11T11:29:20.847Z",
      type: "response_item",
      payload: { type: "function_call_output", call_id: "call_QN0Lw7jU6TTLrFELRdHVYQZi", output },
    };
    const { warnings, logger } = recordingLogger();
    const roomy = await prepareEntryForPersistence(entry, { blobs, logger, maxStringChars: 1000 });
    expect(roomy.payload.output).toBe(output);
    expect(JSON.parse(roomy.payload.output.slice(roomy.payload.output.indexOf("["))).length).toBe(2);

    // 2,000 characters of text after the image: the text beyond the limit goes, the image stays whole.
    const chatty = {
      ...entry,
      payload: { ...entry.payload, output: `${output}\n${"log line\n".repeat(200)}` },
    };
    const cut = await prepareEntryForPersistence(chatty, { blobs, logger, maxStringChars: 1000 });
    const imageStart = output.indexOf(canonical);
    const textBefore = imageStart;
    expect(cut.payload.output).toBe(
      `${chatty.payload.output.slice(0, imageStart + canonical.length + (1000 - textBefore))}\n\n${TRUNCATION_NOTICE}`,
    );
    expect(cut.payload.output).toContain(canonical);
    expect(warnings).toEqual([
      { reason: "unknown-location", field: "output", chars: canonical.length, truncated: false },
      { reason: "unknown-location", field: "output", chars: canonical.length, truncated: true },
    ]);
    expect((await blobs.list()).items).toHaveLength(0);
  });

  it("moves a 1.2 M-character image a Codex user attached (event_msg user_message.images), uncut", async () => {
    const large = noisePng(640, 480, 2);
    const url = `data:image/png;base64,${large.toString("base64")}`;
    expect(url.length).toBeGreaterThan(1_100_000);
    // Codex 0.125 writes the attached image twice: in the response_item message and in this event.
    const entry = {
      timestamp: "2026-05-11T08:32:57.478Z",
      type: "event_msg",
      payload: {
        type: "user_message",
        message: "what is wrong in this screenshot?",
        images: [url],
        local_images: [],
        text_elements: [],
      },
    };
    const { warnings, logger } = recordingLogger();
    const prepared = await prepareEntryForPersistence(entry, { blobs, logger });
    const largeRef = `blob:sha256:${createHash("sha256").update(large).digest("hex")}`;
    expect(prepared.payload.images).toEqual([`data:image/png;base64,${largeRef}`]);
    expect(JSON.stringify(prepared)).not.toContain(TRUNCATION_NOTICE);
    expect(warnings).toEqual([]);
    expect(await resolveBlobRefs([prepared], { blobs })).toEqual([entry]);
  });

  it("moves images of a Codex tool output given as content items (function_call_output.output)", async () => {
    const entry = {
      timestamp: "2026-05-11T08:40:02.117Z",
      type: "response_item",
      payload: {
        type: "function_call_output",
        call_id: "call_8rV2mYcW3bQxLh1Jk0pZsT4n",
        output: [
          { type: "input_text", text: "Screenshot of http://localhost:5173" },
          { type: "input_image", image_url: `data:image/png;base64,${canonical}` },
        ],
      },
    };
    const prepared = await prepareEntryForPersistence(entry, { blobs });
    expect(prepared.payload.output[1]).toEqual({
      type: "input_image",
      image_url: `data:image/png;base64,${ref}`,
    });
    expect(await resolveBlobRefs([prepared], { blobs })).toEqual([entry]);
  });

  it("moves a data:image URL wherever it sits, and leaves one of another type to the string rules", async () => {
    const entry = {
      type: "custom",
      customType: "browser-extension",
      data: {
        lastFrame: `data:image/png;base64,${canonical}`,
        page: "data:text/html;base64,PGgxPmhpPC9oMT4=",
      },
    };
    const prepared = await prepareEntryForPersistence(entry, { blobs });
    expect(prepared.data).toEqual({ lastFrame: `data:image/png;base64,${ref}`, page: entry.data.page });
    expect(await resolveBlobRefs([prepared], { blobs })).toEqual([entry]);
  });

  it("never cuts base64 image data it cannot move: keeps it whole and reports why", async () => {
    const entry = {
      type: "message",
      message: { role: "user", content: [{ type: "text", text: "here" }] },
      // Raw base64 of a PNG in a field no agent format declares: a loader would not resolve a ref here.
      debug: { lastScreenshot: canonical },
      log: "x".repeat(2000),
    };
    const { warnings, logger } = recordingLogger();
    const prepared = await prepareEntryForPersistence(entry, { blobs, logger, maxStringChars: 1000 });
    expect(prepared.debug.lastScreenshot).toBe(canonical);
    // Text that is not an image is still cut.
    expect(prepared.log).toBe(`${"x".repeat(1000)}\n\n${TRUNCATION_NOTICE}`);
    expect(warnings).toEqual([
      { reason: "unknown-location", field: "lastScreenshot", chars: canonical.length, truncated: false },
    ]);
    expect((await blobs.list()).items).toHaveLength(0);
  });

  it("an image field whose text does not decode is text: kept under the limit, cut over it, reported either way", async () => {
    // One stray character: the bytes can no longer be decoded strictly, so they are not image data.
    const damaged = `${canonical.slice(0, 200)}!${canonical.slice(200)}`;
    const entry = {
      type: "message",
      message: { role: "user", content: [{ type: "image", data: damaged, mimeType: "image/png" }] },
    };
    const { warnings, logger } = recordingLogger();
    const roomy = await prepareEntryForPersistence(entry, { blobs, logger });
    expect(roomy.message.content[0]!.data).toBe(damaged);
    const tight = await prepareEntryForPersistence(entry, { blobs, logger, maxStringChars: 1000 });
    expect(tight.message.content[0]!.data).toBe(`${damaged.slice(0, 1000)}\n\n${TRUNCATION_NOTICE}`);
    expect(warnings).toEqual([
      { reason: "not-base64", field: "data", chars: damaged.length, truncated: false },
      { reason: "not-base64", field: "data", chars: damaged.length, truncated: true },
    ]);
    expect((await blobs.list()).items).toHaveLength(0);
  });

  it("property: any spelling of any bytes in an image block resolves to the canonical base64 of the bytes", async () => {
    const spelled = fc
      .tuple(
        fc.uint8Array({ minLength: 1, maxLength: 2500 }),
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom("", "\n", "\r\n"),
      )
      .map(([bytes, safe, strip, newline]) => {
        let text = Buffer.from(bytes).toString("base64");
        if (safe) text = urlSafe(text);
        if (strip) text = unpadded(text);
        if (newline) text = wrapped(text, newline);
        return { bytes, text };
      });
    await fc.assert(
      fc.asyncProperty(spelled, async ({ bytes, text }) => {
        const entry = {
          type: "message",
          message: { role: "user", content: [{ type: "image", data: text }] },
        };
        const prepared = await prepareEntryForPersistence(entry, { blobs, externalizeThreshold: 1 });
        const [resolved] = await resolveBlobRefs([JSON.parse(JSON.stringify(prepared))], { blobs });
        expect(resolved.message.content[0].data).toBe(Buffer.from(bytes).toString("base64"));
      }),
      { numRuns: 150 },
    );
  });
});
