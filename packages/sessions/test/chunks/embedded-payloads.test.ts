// Which base64 payloads a capture moves out of a file's text: only images and documents written
// as canonical base64 (so that encoding them again gives the same text, byte for byte), in every
// place the agents' formats put them; anything else stays where it is.
import { describe, expect, it } from "vitest";
import { findEmbeddedPayloads } from "../../src/chunks/embedded-payloads.js";
import { noisyPng } from "./screenshot-transcript.js";

const png = noisyPng(7);
const base64 = png.toString("base64");
// A minimal PDF as a PDF writer starts one; its body long enough to pass the threshold.
const pdf = Buffer.from(
  `%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n${"% filler\n".repeat(120)}%%EOF\n`,
  "latin1",
);

const moved: { name: string; text: string; payload: Buffer }[] = [
  {
    name: "Claude Code's image block (source.data)",
    text: `{"type":"image","source":{"type":"base64","data":"${base64}","media_type":"image/png"}}\n`,
    payload: png,
  },
  {
    name: "Claude Code's Read result (toolUseResult.file.base64)",
    text: `{"toolUseResult":{"type":"image","file":{"base64":"${base64}","type":"image/png"}}}\n`,
    payload: png,
  },
  {
    name: "Codex's data URL (user_message.images)",
    text: `{"type":"user_message","images":["data:image/png;base64,${base64}"]}\n`,
    payload: png,
  },
  {
    name: "a document block (PDF)",
    text: `{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"${pdf.toString("base64")}"}}\n`,
    payload: pdf,
  },
  {
    name: "a payload after a NUL and a broken UTF-8 byte (the file is bytes, never parsed)",
    text: `\u0000\xff"${base64}"\u0000`,
    payload: png,
  },
];

const kept: { name: string; text: string }[] = [
  { name: "base64 wrapped at 76 characters", text: `"${base64.replace(/(.{76})/g, "$1\\n")}"` },
  { name: "URL-safe base64", text: `"${png.toString("base64url")}"` },
  {
    name: "unpadded base64 of a length not a multiple of 4",
    text: `"${base64.replace(/=+$/, "")}${base64.endsWith("=") ? "" : "A"}"`,
  },
  { name: "a payload under 1,024 characters", text: `"${noisyPng(1).subarray(0, 600).toString("base64")}"` },
  {
    name: "base64 of bytes that are no image or document",
    text: `"${Buffer.alloc(4000, 0x5a).toString("base64")}"`,
  },
  { name: "a PNG's base64 inside a longer run", text: `"QUJD${base64}"` },
];

describe("findEmbeddedPayloads", () => {
  for (const { name, text, payload } of moved) {
    it(`moves ${name}, decoded to its bytes`, () => {
      const bytes = Buffer.from(text, "latin1");
      const found = findEmbeddedPayloads(bytes);
      expect(found).toHaveLength(1);
      const [one] = found;
      expect(Buffer.from(one!.bytes).equals(payload)).toBe(true);
      expect(bytes.subarray(one!.start, one!.end).toString("latin1")).toBe(payload.toString("base64"));
    });
  }

  for (const { name, text } of kept) {
    it(`keeps ${name} where it is`, () => {
      expect(findEmbeddedPayloads(Buffer.from(text, "latin1"))).toEqual([]);
    });
  }

  it("finds both copies of a screenshot, in order", () => {
    const text = Buffer.from(`{"a":"${base64}","b":{"base64":"${base64}"}}\n`, "latin1");
    const found = findEmbeddedPayloads(text);
    expect(found.map((payload) => payload.start)).toEqual([6, 6 + base64.length + 17]);
  });
});
