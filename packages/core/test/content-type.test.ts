import { describe, expect, it } from "vitest";
import { assertContentType, parseContentType } from "../src/content-type.js";
import { expectStowageError } from "../src/testing/expect-stowage-error.js";

describe("content types", () => {
  it.each([
    ["image/png", "image/png", {}],
    ["IMAGE/PNG", "image/png", {}],
    ["text/plain; charset=UTF-8", "text/plain", { charset: "utf-8" }],
    ["text/plain;charset=utf-8", "text/plain", { charset: "utf-8" }],
    ['text/plain; charset="utf-8"', "text/plain", { charset: "utf-8" }],
    ["application/vnd.api+json", "application/vnd.api+json", {}],
    ["multipart/form-data; Boundary=AbC", "multipart/form-data", { boundary: "AbC" }],
    ['text/x-notes; title="a b"', "text/x-notes", { title: "a b" }],
    ["application/x-ms!#$&^_.+-", "application/x-ms!#$&^_.+-", {}],
  ])("parses %j as %j %j", (input, essence, parameters) => {
    expect(parseContentType(input)).toEqual({ essence, parameters });
  });

  it("parses the essence and the parameters", () => {
    expect(parseContentType("Text/Markdown; Charset=UTF-8; variant=GFM")).toEqual({
      essence: "text/markdown",
      parameters: { charset: "utf-8", variant: "GFM" },
    });
  });

  it.each([
    ["", "empty"],
    ["json", "no subtype"],
    ["/png", "no type"],
    ["image/", "empty subtype"],
    ["image/png/x", "two slashes"],
    ["text/plain\nx-injected: 1", "a header injection"],
    ["text/plain; charset", "a parameter without a value"],
    ["text/plain; charset=a; charset=b", "a repeated parameter"],
    ['text/plain; x="a\u0000"', "NUL in a quoted value"],
    ["text/plain; x=a b", "a space in a token"],
    ["té/xt", "non-ASCII"],
    [`a/${"b".repeat(255)}`, "too long (over 255 characters)"],
    [42, "a number"],
  ])("refuses %j (%s)", async (value, _why) => {
    expect(parseContentType(value)).toBeUndefined();
    await expectStowageError(() => assertContentType(value), "INVALID_INPUT");
  });
});
