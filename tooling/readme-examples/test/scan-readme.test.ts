import { describe, expect, it } from "vitest";
import { packageName, scanReadme } from "../src/scan-readme.ts";

const fence = "```";

describe("scanReadme", () => {
  it("reads tagged ts blocks with their line, mode and imported packages", () => {
    const markdown = [
      "# pkg",
      `${fence}sh`,
      "npm install @stowage/a b-lib   # a comment with npm install c",
      "npm i -D vitest@^4",
      fence,
      `${fence}ts runnable`,
      'import { x } from "@stowage/a/sub";',
      'import type { Y } from "b-lib";',
      'import { readFile } from "node:fs/promises";',
      'import "./local.js";',
      fence,
      `${fence}typescript typecheck`,
      'const m = await import("vitest");',
      fence,
    ].join("\n");
    const scan = scanReadme(markdown);
    expect(scan.installs).toEqual(["@stowage/a", "b-lib", "vitest"]);
    expect(scan.versions).toEqual({ vitest: "^4" });
    expect(scan.problems).toEqual([]);
    expect(scan.examples.map(({ line, mode, imports }) => ({ line, mode, imports }))).toEqual([
      { line: 6, mode: "run", imports: ["@stowage/a", "b-lib"] },
      { line: 12, mode: "typecheck", imports: ["vitest"] },
    ]);
    expect(scan.examples[0]?.code.split("\n")).toHaveLength(4);
  });

  it("ignores other languages and text around the blocks", () => {
    const scan = scanReadme(`text\n${fence}json\n{"a": 1}\n${fence}\n${fence}\nplain\n${fence}\n`);
    expect(scan).toEqual({ examples: [], installs: [], versions: {}, problems: [] });
  });

  // Hostile and malformed Markdown: each row is a README and the problems it must report.
  const hostile: [string, string, RegExp[]][] = [
    [
      "an untagged ts block",
      `${fence}ts\nlet a = 1;\n${fence}`,
      [/line 1: a ts block needs exactly one tag/],
    ],
    ["a misspelt tag", `${fence}ts runable\nlet a = 1;\n${fence}`, [/line 1: .*"runable"/]],
    ["two tags", `${fence}ts runnable typecheck\nlet a = 1;\n${fence}`, [/line 1: .*exactly one tag/]],
    ["an unclosed block", `${fence}sh\nnpm install a\n`, [/line 1: the code block is never closed/]],
    [
      "an import no install line names",
      `${fence}ts runnable\nimport { Hono } from "hono";\n${fence}`,
      [/line 1: imports hono, which no npm install line/],
    ],
    [
      "an install line inside a ts block does not count",
      `${fence}ts runnable\n// npm install hono\nimport { Hono } from "hono";\n${fence}`,
      [/imports hono/],
    ],
    ["a js block", `${fence}js\nconst a = 1;\n${fence}`, [/line 1: a js block is never checked/]],
    ["a tsx block", `${fence}tsx runnable\nconst a = 1;\n${fence}`, [/line 1: a tsx block is never checked/]],
  ];
  it.each(hostile)("reports %s", (_name, markdown, expected) => {
    const { problems } = scanReadme(markdown);
    expect(problems).toHaveLength(expected.length);
    for (const [index, pattern] of expected.entries()) expect(problems[index]).toMatch(pattern);
  });

  it("keeps a longer fence open across a shorter one, and reads CRLF files", () => {
    const markdown = `${fence}\`ts runnable\r\nconst s = "${fence}";\r\n${fence}\r\nlet b = 2;\r\n${fence}\`\r\n`;
    const scan = scanReadme(markdown);
    expect(scan.problems).toEqual([]);
    expect(scan.examples).toHaveLength(1);
    expect(scan.examples[0]?.code).toBe(`const s = "${fence}";\n${fence}\nlet b = 2;`);
  });

  it("takes the package of a specifier or an install argument", () => {
    expect(packageName("@scope/name/sub/path")).toBe("@scope/name");
    expect(packageName("@scope/name@^1.2.0")).toBe("@scope/name");
    expect(packageName("lodash/fp")).toBe("lodash");
    expect(packageName("typescript@~5.9")).toBe("typescript");
  });
});
