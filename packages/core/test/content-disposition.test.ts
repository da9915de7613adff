import { describe, expect, it } from "vitest";
import { contentDisposition } from "../src/content-disposition.js";

// Expected values written from RFC 6266 / RFC 8187: an ASCII fallback, then the exact UTF-8 name.
describe("contentDisposition", () => {
  it.each([
    ["attachment", "shot.png", `attachment; filename="shot.png"; filename*=UTF-8''shot.png`],
    ["inline", "report é.png", `inline; filename="report _.png"; filename*=UTF-8''report%20%C3%A9.png`],
    ["attachment", 'a"b\\c.txt', `attachment; filename="a_b_c.txt"; filename*=UTF-8''a%22b%5Cc.txt`],
    [
      "attachment",
      "it's (1)*.log",
      `attachment; filename="it's (1)*.log"; filename*=UTF-8''it%27s%20%281%29%2A.log`,
    ],
    ["attachment", "😀.gif", `attachment; filename="__.gif"; filename*=UTF-8''%F0%9F%98%80.gif`],
  ] as const)("%s %j", (disposition, filename, expected) => {
    expect(contentDisposition(disposition, filename)).toBe(expected);
  });
});
