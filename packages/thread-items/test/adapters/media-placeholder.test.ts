import { describe, expect, it } from "vitest";
import { codexImage } from "../../src/adapters/codex-content.js";
import { imagePlaceholder } from "../../src/adapters/media-placeholder.js";

const hash = "0f".repeat(32);
const ref = `blob:sha256:${hash}`;

describe("imagePlaceholder", () => {
  it.each([
    ["base64 data, sized from its digits", ["image/png", "iVBORw0KGgo="], "[image: image/png, 8 bytes]"],
    ["a blob ref, named so a reader can show it", ["image/png", ref], `[image: image/png, ${ref}]`],
    [
      "a blob ref sized from what the tool said",
      ["image/jpeg", ref, 48_213],
      `[image: image/jpeg, 48,213 bytes, ${ref}]`,
    ],
    ["no type", [undefined, undefined], "[image: image]"],
    // 75 characters of the base64 alphabets (colons are not): 56 bytes.
    [
      "a ref of the wrong length is base64 text",
      ["image/png", `blob:sha256:${hash}0`],
      "[image: image/png, 56 bytes]",
    ],
  ] as const)("%s", (_name, [type, payload, known], expected) => {
    expect(imagePlaceholder(type, payload, known)).toBe(expected);
  });

  it("names the ref of a Codex data: URL whose payload the blob store moved", () => {
    expect(codexImage(`data:image/png;base64,${ref}`)).toBe(`[image: image/png, ${ref}]`);
    expect(codexImage("data:image/png;base64,iVBORw0KGgo=")).toBe("[image: image/png, 8 bytes]");
  });
});
