import { describe, expect, it } from "vitest";
import { sniffImageType } from "../src/sniff-image-type.js";

// First bytes of real files, as their format specifications define them.
const bytes = (...values: number[]) => new Uint8Array(values);

describe("sniffImageType", () => {
  it.each([
    ["image/png", bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13)],
    ["image/jpeg", bytes(0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46)],
    ["image/gif", new TextEncoder().encode("GIF89a\u0001\u0000")],
    ["image/webp", new TextEncoder().encode("RIFF\u0024\u0000\u0000\u0000WEBPVP8 ")],
  ])("tells %s", (type, data) => {
    expect(sniffImageType(data)).toBe(type);
  });

  it.each([
    ["empty", bytes()],
    ["a truncated PNG signature", bytes(0x89, 0x50, 0x4e, 0x47)],
    ["a RIFF that is not WebP (WAV)", new TextEncoder().encode("RIFF\u0024\u0000\u0000\u0000WAVEfmt ")],
    ["WEBP without RIFF", new TextEncoder().encode("XXXX\u0024\u0000\u0000\u0000WEBPVP8 ")],
    ["HTML", new TextEncoder().encode("<!doctype html><script>")],
    ["SVG (never served inline)", new TextEncoder().encode('<svg xmlns="http://www.w3.org/2000/svg">')],
  ])("says nothing for %s", (_why, data) => {
    expect(sniffImageType(data)).toBeUndefined();
  });
});
