import { describe, expect, it } from "vitest";
import { parseDataUrl } from "../src/data-url.js";

// Expected parts written by hand from the WHATWG fetch standard's "data: URL processor" (§ 4.6):
// the header ends at the first comma, the scheme and `;base64` match in any case, spaces may
// follow the `;`, and a media type that does not parse leaves the URL a data URL without one.
describe("parseDataUrl", () => {
  it.each([
    [
      "data:image/png;base64,iVBORw0KGgo=",
      { header: "data:image/png;base64,", mediaType: "image/png", base64: true, payload: "iVBORw0KGgo=" },
    ],
    [
      "DATA:IMAGE/PNG;BASE64,iVBOR",
      { header: "DATA:IMAGE/PNG;BASE64,", mediaType: "image/png", base64: true, payload: "iVBOR" },
    ],
    [
      "data:image/png;charset=utf-8;name=shot.png;base64,AAAA",
      {
        header: "data:image/png;charset=utf-8;name=shot.png;base64,",
        mediaType: "image/png",
        base64: true,
        payload: "AAAA",
      },
    ],
    [
      "data:image/png;name=my shot.png;base64,AAAA",
      {
        header: "data:image/png;name=my shot.png;base64,",
        mediaType: "image/png",
        base64: true,
        payload: "AAAA",
      },
    ],
    [
      "data: image/jpeg ;  base64 ,/9j/",
      { header: "data: image/jpeg ;  base64 ,", mediaType: "image/jpeg", base64: true, payload: "/9j/" },
    ],
    ["data:,hello", { header: "data:,", mediaType: undefined, base64: false, payload: "hello" }],
    ["data:;base64,AAAA", { header: "data:;base64,", mediaType: undefined, base64: true, payload: "AAAA" }],
    [
      "data:text/plain,a,b",
      { header: "data:text/plain,", mediaType: "text/plain", base64: false, payload: "a,b" },
    ],
    [
      "data:image/svg+xml;base64,",
      { header: "data:image/svg+xml;base64,", mediaType: "image/svg+xml", base64: true, payload: "" },
    ],
    [
      "data:application/pdf;base64,JVBERi0=",
      {
        header: "data:application/pdf;base64,",
        mediaType: "application/pdf",
        base64: true,
        payload: "JVBERi0=",
      },
    ],
  ])("reads %j", (value, parts) => {
    expect(parseDataUrl(value)).toEqual(parts);
  });

  // Hostile and malformed input: each row is either not a data URL at all, or a data URL whose
  // lookalike parts must not be believed.
  it.each<[string, unknown, Partial<ReturnType<typeof parseDataUrl>> | undefined]>([
    ["not a string", 42, undefined],
    ["null", null, undefined],
    ["empty", "", undefined],
    ["no comma", "data:image/png;base64", undefined],
    ["another scheme", "javascript:alert(1)//data:image/png;base64,AAAA", undefined],
    ["a leading space", " data:image/png;base64,AAAA", undefined],
    ["the scheme misspelt", "dat:image/png;base64,AAAA", undefined],
    ["a NUL in the header", "data:image/png\u0000;base64,AAAA", undefined],
    ["a line break in the header", "data:image/png\n;base64,AAAA", undefined],
    ["non-ASCII in the header", "data:imáge/png;base64,AAAA", undefined],
    ["a comma past the longest header", `data:image/png;x=${"a".repeat(2000)};base64,AAAA`, undefined],
    ["a megabyte without a comma", `data:image/png;base64${"A".repeat(1_000_000)}`, undefined],
    [
      "base64 not last",
      "data:image/png;base64;charset=utf-8,AAAA",
      { base64: false, mediaType: "image/png" },
    ],
    ["base64 glued to a word", "data:image/png;xbase64,AAAA", { base64: false, mediaType: "image/png" }],
    ["base64 without its semicolon", "data:base64,AAAA", { base64: false, mediaType: undefined }],
    ["base64 with a suffix", "data:image/png;base64x,AAAA", { base64: false, mediaType: "image/png" }],
    ["a type without a subtype", "data:image;base64,AAAA", { base64: true, mediaType: undefined }],
    ["two slashes", "data:image/png/x;base64,AAAA", { base64: true, mediaType: undefined }],
    [
      "a comma inside a quoted parameter",
      'data:text/plain;name="a,b";base64,AAAA',
      { payload: 'b";base64,AAAA' },
    ],
  ])("%s", (_why, value, expected) => {
    const parsed = parseDataUrl(value);
    if (expected === undefined) expect(parsed).toBeUndefined();
    else expect(parsed).toMatchObject(expected);
  });

  it("looks for the comma only in the first 1,024 characters, so a long payload is never scanned", () => {
    // A comma just inside the limit ends the header; one just past it means the text is not a data
    // URL, however long it is: the search stops at the limit instead of walking the payload.
    const header = (length: number) => `data:image/png;x=${"a".repeat(length - 25)};base64,`;
    expect(header(1024)).toHaveLength(1024);
    expect(parseDataUrl(`${header(1024)}AAAA`)?.payload).toBe("AAAA");
    expect(parseDataUrl(`${header(1025)}AAAA`)).toBeUndefined();
    expect(parseDataUrl(`data:image/png;base64${"A".repeat(20_000_000)},AAAA`)).toBeUndefined();
  });
});
