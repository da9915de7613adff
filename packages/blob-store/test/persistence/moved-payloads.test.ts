import { createHash } from "node:crypto";
import { createMemoryObjectStore } from "@stowage/core";
import { expectStowageError, seededRandom } from "@stowage/core/testing";
import { encodePng } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { createBlobStore } from "../../src/blob-store.js";
import {
  findEntryPayloads,
  type MovedPayload,
  parseMovedPayloads,
  restoreEntryPayloads,
} from "../../src/persistence/moved-payloads.js";

const random = seededRandom(11);
const png = encodePng(48, 32, () => [random() * 256, random() * 256, random() * 256]);
const other = encodePng(40, 30, () => [random() * 256, random() * 256, random() * 256]);
const b64 = png.toString("base64");
const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const ref = (bytes: Uint8Array) => `blob:sha256:${sha(bytes)}`;
/** MIME's 76-column lines (RFC 2045), `\n` or `\r\n`, with or without a line end after the last. */
const wrapped = (text: string, width: number, end: string, final: boolean) =>
  (text.match(new RegExp(`.{1,${width}}`, "g")) ?? []).join(end) + (final ? end : "");
const urlSafe = (text: string) => text.replaceAll("+", "-").replaceAll("/", "_");

/** Anthropic's image block, as Claude Code writes it in `message.content` (and in tool results). */
const imageBlock = (data: string) => ({
  type: "image",
  source: { type: "base64", media_type: "image/png", data },
});
const userWith = (content: unknown[]) => ({ type: "user", uuid: "u", message: { role: "user", content } });
/** Where the Anthropic block keeps its payload. */
const read0 = (entry: unknown) =>
  (entry as { message: { content: [{ source: { data: string } }] } }).message.content[0].source.data;

async function roundTrip<T>(entries: T[], threshold?: number) {
  const blobs = createBlobStore({ store: createMemoryObjectStore() });
  const found = findEntryPayloads(entries, threshold ? { threshold } : {});
  // What a store does with what was found: each payload stored once under its SHA-256.
  for (const [sha256, bytes] of found.payloads) expect((await blobs.put(bytes)).hash).toBe(sha256);
  const out = found.entries;
  // What a store keeps: the JSON text of each entry as externalized, and the moved lists.
  const stored = out.map((result, i) => JSON.stringify(result ? result.entry : entries[i]));
  const moved = new Map<number, MovedPayload[]>();
  out.forEach((result, i) => {
    if (result) moved.set(i, JSON.parse(JSON.stringify(result.moved)));
  });
  const loaded = stored.map((line) => JSON.parse(line) as unknown);
  await restoreEntryPayloads(loaded, moved, { blobs });
  return { blobs, out, stored, loaded, moved };
}

describe("findEntryPayloads and restoreEntryPayloads", () => {
  // Each row: a payload text as some agent or tool writes it, and whether its text can be rebuilt
  // exactly from its bytes (moved) or not (kept where it is). Every row must come back byte for byte.
  const rows: [string, string, boolean][] = [
    ["canonical base64", b64, true],
    ["URL-safe, padded", urlSafe(b64), true],
    ["URL-safe, unpadded", urlSafe(b64).replace(/=+$/, ""), true],
    ["standard, unpadded", b64.replace(/=+$/, ""), true],
    ["MIME lines of 76, \\n", wrapped(b64, 76, "\n", false), true],
    ["MIME lines of 76, \\r\\n, a final line end", wrapped(b64, 76, "\r\n", true), true],
    ["PEM lines of 64, \\n, a final line end", wrapped(b64, 64, "\n", true), true],
    ["lines of uneven length", `${b64.slice(0, 70)}\n${b64.slice(70, 146)}\n${b64.slice(146)}`, false],
    ["a space inside", `${b64.slice(0, 100)} ${b64.slice(100)}`, false],
    ["mixed alphabets", b64.replace("/", "_"), false],
    ["leading line end", `\n${b64}`, false],
  ];
  it.each(rows)("%s: comes back exactly", async (_name, text, moves) => {
    // The padding variants only differ where the PNG's length leaves a remainder.
    expect(png.byteLength % 3).not.toBe(0);
    const entry = userWith([imageBlock(text)]);
    const { out, stored, loaded, blobs } = await roundTrip([entry]);
    expect(JSON.stringify(loaded[0])).toBe(JSON.stringify(entry));
    if (moves) {
      expect(read0(out[0]!.entry)).toBe(ref(png));
      expect(stored[0]).not.toContain(b64.slice(0, 64));
      expect(await blobs.get(sha(png))).toEqual(new Uint8Array(png));
    } else {
      expect(out[0]).toBeUndefined();
    }
  });

  it("a non-canonical last digit (bits a decoder ignores) is kept where it is", async () => {
    // The last digit before the padding carries bits no byte uses; canonical base64 leaves them
    // zero, decoders ignore them. Setting one gives another text of the same bytes.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const bytes = Buffer.from(b64, "base64");
    const pads = b64.endsWith("==") ? 2 : 1;
    const last = b64.length - pads - 1;
    const text = b64.slice(0, last) + alphabet[alphabet.indexOf(b64[last]!) + 1] + b64.slice(last + 1);
    expect(Buffer.from(text, "base64")).toEqual(bytes);
    const entry = userWith([imageBlock(text)]);
    const { out, loaded } = await roundTrip([entry]);
    expect(out[0]).toBeUndefined();
    expect(JSON.stringify(loaded[0])).toBe(JSON.stringify(entry));
  });

  it("the Read tool's two copies of one image (message.content and toolUseResult.file.base64) are one blob", async () => {
    const entry = {
      type: "user",
      uuid: "r",
      message: {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "t1", content: [imageBlock(b64)] }],
      },
      toolUseResult: {
        type: "image",
        file: { base64: b64, type: "image/png", originalSize: png.byteLength },
      },
    };
    const { out, loaded, blobs } = await roundTrip([entry]);
    const moved = out[0]!.moved;
    expect(moved.map((m) => m.path)).toEqual([
      ["message", "content", 0, "content", 0, "source", "data"],
      ["toolUseResult", "file", "base64"],
    ]);
    expect(new Set(moved.map((m) => m.sha256))).toEqual(new Set([sha(png)]));
    expect((await blobs.list()).items.map((item) => item.hash)).toEqual([sha(png)]);
    expect(JSON.stringify(loaded[0])).toBe(JSON.stringify(entry));
  });

  it("data URLs keep their header as written; nested tool results, documents and Codex images come back", async () => {
    const pdf = Buffer.concat([Buffer.from("%PDF-1.7\n"), other]);
    const upper = `DATA:IMAGE/PNG;NAME=a.png;BASE64,${b64}`;
    const entries = [
      {
        type: "user",
        message: {
          content: [
            {
              type: "tool_result",
              content: [{ type: "tool_result", content: [imageBlock(b64), { type: "text", text: upper }] }],
            },
            {
              type: "document",
              source: { type: "base64", media_type: "application/pdf", data: pdf.toString("base64") },
            },
          ],
        },
      },
      {
        type: "event_msg",
        payload: {
          type: "user_message",
          message: "see",
          images: [upper, `data:image/png;base64,${other.toString("base64")}`],
        },
      },
      {
        type: "response_item",
        payload: { type: "message", role: "user", content: [{ type: "input_image", image_url: upper }] },
      },
    ];
    const { out, loaded } = await roundTrip(entries);
    expect(JSON.stringify(loaded)).toBe(JSON.stringify(entries));
    const inner = (out[0]!.entry as { message: { content: unknown[] } }).message.content[0] as {
      content: [{ content: [unknown, { text: string }] }];
    };
    expect(inner.content[0].content[1].text).toBe(`DATA:IMAGE/PNG;NAME=a.png;BASE64,${ref(png)}`);
    expect((out[1]!.entry as { payload: { images: unknown } }).payload.images).toEqual([
      `DATA:IMAGE/PNG;NAME=a.png;BASE64,${ref(png)}`,
      `data:image/png;base64,${ref(other)}`,
    ]);
    expect(out.every((result) => result !== undefined)).toBe(true);
  });

  it("moves payloads of the threshold and over, keeps shorter ones and refs already in place", async () => {
    const small = Buffer.alloc(768, 7); // 1,024 base64 characters
    const smaller = Buffer.alloc(765, 7); // 1,020
    const already = ref(other);
    const entries = [
      userWith([imageBlock(small.toString("base64"))]),
      userWith([imageBlock(smaller.toString("base64"))]),
      userWith([imageBlock(already)]),
    ];
    const { out, loaded } = await roundTrip(entries);
    expect(read0(out[0]!.entry)).toBe(ref(small));
    expect(out[1]).toBeUndefined();
    // A ref the caller wrote is the caller's text: not resolved on the way back.
    expect(out[2]).toBeUndefined();
    expect(JSON.stringify(loaded)).toBe(JSON.stringify(entries));
  });

  it("keys named like Object's members are followed as the entry's own fields", async () => {
    const entry = JSON.parse(
      `{"type":"user","__proto__":{"content":[${JSON.stringify(imageBlock(b64))}]},"constructor":{"content":[${JSON.stringify(imageBlock(b64))}]}}`,
    );
    const { out, loaded } = await roundTrip([entry]);
    expect(out[0]!.moved.map((m) => m.path[0])).toEqual(["__proto__", "constructor"]);
    expect(JSON.stringify(loaded[0])).toBe(JSON.stringify(entry));
    expect(Object.getPrototypeOf(loaded[0])).toBe(Object.prototype);
  });

  it("the input is not mutated; an entry with nothing to move is undefined", async () => {
    const entry = userWith([imageBlock(b64), { type: "text", text: "hi" }]);
    const copy = structuredClone(entry);
    const { out } = await roundTrip([entry, { type: "user", message: { content: "text" } }]);
    expect(entry).toEqual(copy);
    expect(out[1]).toBeUndefined();
  });

  it("a missing blob is INTEGRITY / MISSING_BLOB naming the ref; a place that no longer holds the ref is PAYLOAD_REF_MISMATCH", async () => {
    const entry = userWith([imageBlock(b64)]);
    const { stored, moved } = await roundTrip([entry]);
    const empty = createBlobStore({ store: createMemoryObjectStore() });
    const missing = await expectStowageError(
      restoreEntryPayloads([JSON.parse(stored[0]!)], moved, { blobs: empty }),
      "INTEGRITY",
    );
    expect(missing.reason).toBe("MISSING_BLOB");
    expect(missing.details).toEqual({ ref: ref(png) });

    const blobs = createBlobStore({ store: createMemoryObjectStore() });
    await blobs.put(png);
    for (const changed of [
      userWith([imageBlock("something else")]),
      userWith([]),
      { type: "user", message: "gone" },
    ]) {
      const error = await expectStowageError(restoreEntryPayloads([changed], moved, { blobs }), "INTEGRITY");
      expect(error.reason).toBe("PAYLOAD_REF_MISMATCH");
    }
    // A recorded path through Object's members finds no own field.
    const protoPath = new Map([[0, [{ path: ["constructor", "name"], sha256: sha(png), form: "" }]]]);
    const error = await expectStowageError(
      restoreEntryPayloads([{ type: "user" }], protoPath, { blobs }),
      "INTEGRITY",
    );
    expect(error.reason).toBe("PAYLOAD_REF_MISMATCH");
  });
});

describe("parseMovedPayloads", () => {
  const good = { path: ["message", "content", 0, "source", "data"], sha256: sha(png), form: "" };
  it("takes what findEntryPayloads writes, every form", () => {
    const forms = [
      "",
      "url",
      "unpadded",
      "url unpadded",
      "wrap:76",
      "wrap:76 crlf",
      "wrap:64 final",
      "url unpadded wrap:76 crlf final",
    ];
    for (const form of forms) expect(parseMovedPayloads([{ ...good, form }])).toEqual([{ ...good, form }]);
  });

  it.each([
    ["not an array", { ...good }],
    ["an empty list", []],
    ["a string", "[]"],
    ["no path", [{ ...good, path: [] }]],
    ["a negative index", [{ ...good, path: ["a", -1] }]],
    ["a fractional index", [{ ...good, path: ["a", 1.5] }]],
    ["an object step", [{ ...good, path: [{}] }]],
    ["an upper-case hash", [{ ...good, sha256: sha(png).toUpperCase() }]],
    ["a short hash", [{ ...good, sha256: "ab" }]],
    ["an unknown form", [{ ...good, form: "base32" }]],
    ["words out of order", [{ ...good, form: "unpadded url" }]],
    ["a word twice", [{ ...good, form: "url url" }]],
    ["zero-width lines", [{ ...good, form: "wrap:0" }]],
    ["crlf without wrapping", [{ ...good, form: "crlf" }]],
    ["a trailing space", [{ ...good, form: "url " }]],
    ["null", [null]],
  ])("refuses %s", (_name, value) => {
    expect(() => parseMovedPayloads(value)).toThrow();
  });
});
