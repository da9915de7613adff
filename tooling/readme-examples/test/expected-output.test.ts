import { describe, expect, it } from "vitest";
import { expectedOutputs, unkeptOutputs } from "../src/expected-output.ts";

describe("expectedOutputs", () => {
  it("reads the comment after each one-line console.log, with its line in the example", () => {
    const code = [
      'const a = "x";',
      "console.log(a.length); // 1",
      "console.log(a); //   x  ",
      "console.log(a); // <- no: a comment on a line that is not a whole statement is read too",
      "foo(); // not a console.log: ignored",
      "console.log(a);",
      "  console.log(`multi",
      "line`); // ignored: not one line",
    ].join("\n");
    expect(expectedOutputs(code)).toEqual([
      { line: 2, text: "1" },
      { line: 3, text: "x" },
      { line: 4, text: "<- no: a comment on a line that is not a whole statement is read too" },
    ]);
  });
});

describe("unkeptOutputs", () => {
  const promise = (text: string, line = 1) => ({ line, text });

  it("keeps promises met in order, whitespace runs counting as one space", () => {
    const printed =
      "1 1 0\n{\n  truncated: true,\n  totalLines: 3\n}\ntrue 5 file:///tmp/agent-x1/blobs/ab12\n";
    const expected = [
      promise("1 1 0"),
      promise("{ truncated: true, totalLines: 3 }"),
      promise("true 5 file:///tmp/agent-…/blobs/<hash>"),
    ];
    expect(unkeptOutputs(printed, expected)).toEqual([]);
  });

  // Each row: what was printed, what a comment promised; every one of these is broken.
  const broken: [string, string, string][] = [
    ["a different value", "1 1 1", "1 1 0"],
    ["a missing value", "", "true"],
    ["a <name> stands for a word, never nothing", "true", "true <hash>"],
    ["whole words only", "11 0", "1 0"],
    ["regex characters are literal", "aXb", "a.b"],
    ["a quoted string that was printed unquoted", "a.ts", '"a.ts"'],
  ];
  it.each(broken)("reports %s", (_name, printed, text) => {
    expect(unkeptOutputs(printed, [promise(text)])).toEqual([promise(text)]);
  });

  it("needs the promises in the order they were printed", () => {
    expect(unkeptOutputs("b\na\n", [promise("a", 1), promise("b", 2)])).toEqual([promise("b", 2)]);
  });
});
