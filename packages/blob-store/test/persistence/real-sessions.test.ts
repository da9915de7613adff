import { createHash } from "node:crypto";
import { createMemoryObjectStore } from "@stowage/core";
import { seededRandom } from "@stowage/core/testing";
import { encodePng, realTranscripts } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { createBlobStore } from "../../src/blob-store.js";
import { prepareEntryForPersistence } from "../../src/persistence/prepare-entry.js";
import { resolveBlobRefs } from "../../src/persistence/resolve-refs.js";
import { TRUNCATION_NOTICE } from "../../src/persistence/truncate-string.js";

// Session files real agents wrote, beside the clone as CI has them; never copied into the repository.
const real = realTranscripts("real-session tests");
const entriesOf = real.records;
const line = (file: string, number: number) => entriesOf(file)[number - 1]!;

function noisePng(width: number, height: number, seed: number): Buffer {
  const random = seededRandom(seed);
  return encodePng(width, height, () => [random() * 256, random() * 256, random() * 256]);
}
const refOf = (bytes: Buffer) => `blob:sha256:${createHash("sha256").update(bytes).digest("hex")}`;

function recordingLogger() {
  const warnings: unknown[] = [];
  const warn = (first: Record<string, unknown> | string) =>
    void warnings.push(typeof first === "string" ? undefined : first);
  return { warnings, logger: { warn } };
}

describe.skipIf(!real.present)("real session files", () => {
  const all = real.files();

  it.each(all)(
    "%s: every line is kept as it is, less its streaming leftovers, and resolves to itself",
    async (file) => {
      const blobs = createBlobStore({ store: createMemoryObjectStore() });
      const { warnings, logger } = recordingLogger();
      const entries = entriesOf(file);
      const prepared = [];
      for (const entry of entries) prepared.push(await prepareEntryForPersistence(entry, { blobs, logger }));
      // The files hold no inline images and no string over the limit: nothing moves, nothing is cut.
      // pi wrote the `partialJson` of tool calls cut short by an abort; it is dropped.
      const expected = JSON.parse(JSON.stringify(entries), (key, value) =>
        key === "partialJson" ? undefined : value,
      );
      expect(prepared).toEqual(expected);
      expect(warnings).toEqual([]);
      expect(await resolveBlobRefs(prepared, { blobs, logger })).toEqual(expected);
    },
  );

  it("moves real images put where each agent writes them into real lines, whole", async () => {
    const screenshot = noisePng(320, 200, 3);
    const large = noisePng(640, 480, 4);
    const base64 = screenshot.toString("base64");
    const largeUrl = `data:image/png;base64,${large.toString("base64")}`;
    expect(largeUrl.length).toBeGreaterThan(1_100_000);

    // Claude Code 2.0.76: the real Read tool_result record, as it is when the file read is a PNG.
    const claude = line("claude-code/session-3fe1b6bc.jsonl", 146);
    claude.message.content[0].content = [
      { type: "image", source: { type: "base64", data: base64, media_type: "image/png" } },
    ];
    claude.toolUseResult = {
      type: "image",
      file: { base64, type: "image/png", originalSize: screenshot.byteLength },
    };
    // Codex 0.125: the real prompt, with a pasted screenshot in both of its copies.
    const codexFile = "codex/rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl";
    const codexItem = line(codexFile, 6);
    codexItem.payload.content.push({ type: "input_image", image_url: largeUrl });
    const codexEvent = line(codexFile, 7);
    codexEvent.payload.images = [largeUrl];
    // pi: the real read tool result, as pi writes an image file it read.
    const pi = line("pi/large-session.jsonl", 7);
    pi.message.content = [
      { type: "text", text: "Read image file [image/png]" },
      { type: "image", data: base64, mimeType: "image/png" },
    ];

    const entries = [claude, codexItem, codexEvent, pi];
    const blobs = createBlobStore({ store: createMemoryObjectStore() });
    const { warnings, logger } = recordingLogger();
    const prepared = [];
    for (const entry of entries) prepared.push(await prepareEntryForPersistence(entry, { blobs, logger }));

    expect(prepared[0]!.message.content[0].content[0].source.data).toBe(refOf(screenshot));
    expect(prepared[0]!.toolUseResult.file.base64).toBe(refOf(screenshot));
    expect(prepared[1]!.payload.content.at(-1).image_url).toBe(`data:image/png;base64,${refOf(large)}`);
    expect(prepared[2]!.payload.images).toEqual([`data:image/png;base64,${refOf(large)}`]);
    expect(prepared[3]!.message.content[1].data).toBe(refOf(screenshot));
    const lines = prepared.map((entry) => JSON.stringify(entry)).join("\n");
    expect(lines).not.toContain(TRUNCATION_NOTICE);
    expect(lines).not.toContain("iVBORw0KGgo");
    expect(warnings).toEqual([]);
    expect((await blobs.list()).items.map((item) => item.hash).sort()).toEqual(
      [refOf(screenshot), refOf(large)].map((ref) => ref.slice("blob:sha256:".length)).sort(),
    );
    expect(await resolveBlobRefs(JSON.parse(`[${lines.split("\n").join(",")}]`), { blobs, logger })).toEqual(
      entries,
    );
  });
});
