import type { Prng } from "./prng.js";

/** Source files of the imaginary project the generated sessions work on. */
export const PROJECT_FILES: Readonly<Record<string, string>> = {
  "src/parser.ts": `import { type Token, tokenize } from "./tokenizer.js";
import { PREFIXES, stripPrefix } from "./prefix.js";

export interface ParseResult {
  tokens: Token[];
  errors: string[];
}

/** Parses a line of the query language into tokens, collecting errors instead of throwing. */
export function parseLine(line: string): ParseResult {
  const errors: string[] = [];
  const tokens: Token[] = [];
  for (const token of tokenize(line)) {
    if (token.kind === "word" && PREFIXES.some((prefix) => token.text.startsWith(prefix))) {
      const stripped = stripPrefix(token.text);
      if (stripped === undefined) {
        errors.push(\`unknown prefix in "\${token.text}" at \${token.start}\`);
        continue;
      }
      tokens.push({ ...token, kind: "prefixed", text: stripped });
      continue;
    }
    tokens.push(token);
  }
  return { tokens, errors };
}

export function parseToken(text: string): Token | undefined {
  const [first] = tokenize(text);
  return first;
}
`,
  "src/tokenizer.ts": `export type TokenKind = "word" | "number" | "string" | "prefixed" | "operator";

export interface Token {
  kind: TokenKind;
  text: string;
  start: number;
}

const OPERATORS = new Set(["=", "!=", "<", ">", "<=", ">=", "~"]);

export function* tokenize(input: string): Generator<Token> {
  let index = 0;
  while (index < input.length) {
    const char = input[index]!;
    if (char === " " || char === "\\t") {
      index++;
      continue;
    }
    if (char === '"') {
      const end = input.indexOf('"', index + 1);
      const stop = end === -1 ? input.length : end + 1;
      yield { kind: "string", text: input.slice(index + 1, stop - 1), start: index };
      index = stop;
      continue;
    }
    const match = /^[^\\s"]+/.exec(input.slice(index));
    const text = match ? match[0] : char;
    const kind = OPERATORS.has(text) ? "operator" : /^\\d+$/.test(text) ? "number" : "word";
    yield { kind, text, start: index };
    index += text.length;
  }
}
`,
  "src/prefix.ts": `/** Prefixes the query language accepts before a field name. */
export const PREFIXES = ["@", "#", "tag:", "is:"] as const;

export function stripPrefix(text: string): string | undefined {
  for (const prefix of PREFIXES) {
    if (text.startsWith(prefix)) return text.slice(prefix.length) || undefined;
  }
  return undefined;
}
`,
  "test/parser.test.ts": `import { describe, expect, it } from "vitest";
import { parseLine, parseToken } from "../src/parser.js";

describe("parseLine", () => {
  it("keeps plain words", () => {
    expect(parseLine("hello world").tokens.map((t) => t.text)).toEqual(["hello", "world"]);
  });
  it("strips known prefixes", () => {
    expect(parseLine("tag:urgent").tokens[0]).toMatchObject({ kind: "prefixed", text: "urgent" });
  });
  it("reports an unknown prefix", () => {
    expect(parseLine("is:").errors).toEqual(['unknown prefix in "is:" at 0']);
  });
  it("handles the new owner: prefix", () => {
    expect(parseLine("owner:ana").tokens[0]).toMatchObject({ kind: "prefixed", text: "ana" });
  });
});

describe("parseToken", () => {
  it("returns the first token", () => {
    expect(parseToken("  42 apples")).toMatchObject({ kind: "number", text: "42" });
  });
});
`,
};

export const PROJECT_PATHS = Object.keys(PROJECT_FILES);

export const CWD = "/home/dev/projects/query-tokenizer";

/** `cat -n`-style numbering, as Claude Code's Read tool returns files. */
export function numbered(content: string): string {
  return content
    .split("\n")
    .map((line, index) => `${String(index + 1).padStart(6, " ")}→${line}`)
    .join("\n");
}

export function vitestOutput(random: Prng, failing: boolean): string {
  const duration = random.int(300, 2400);
  const lines = [
    "",
    " RUN  v2.1.9 /home/dev/projects/query-tokenizer",
    "",
    failing ? " ❯ test/parser.test.ts (5 tests | 1 failed) 14ms" : " ✓ test/parser.test.ts (5 tests) 9ms",
    " ✓ test/tokenizer.test.ts (12 tests) 6ms",
    " ✓ test/prefix.test.ts (4 tests) 3ms",
  ];
  if (failing) {
    lines.push(
      "   × parseLine > handles the new owner: prefix 4ms",
      "     → expected { kind: 'word', text: 'owner:ana', start: 0 } to match object { kind: 'prefixed', text: 'ana' }",
      "",
      "⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯",
      "",
      " FAIL  test/parser.test.ts > parseLine > handles the new owner: prefix",
      "AssertionError: expected { kind: 'word', text: 'owner:ana', start: 0 } to match object { kind: 'prefixed', text: 'ana' }",
      "",
      "- Expected",
      "+ Received",
      "",
      "  Object {",
      '-   "kind": "prefixed",',
      '-   "text": "ana",',
      '+   "kind": "word",',
      '+   "text": "owner:ana",',
      "  }",
      "",
      " ❯ test/parser.test.ts:15:43",
      "     13|   });",
      '     14|   it("handles the new owner: prefix", () => {',
      '     15|     expect(parseLine("owner:ana").tokens[0]).toMatchObject({ kind: "prefixed", text: "ana" });',
      "       |                                           ^",
      "     16|   });",
      "     17| });",
      "",
      "⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/1]⎯",
      "",
      " Test Files  1 failed | 2 passed (3)",
      "      Tests  1 failed | 20 passed (21)",
    );
  } else {
    lines.push("", " Test Files  3 passed (3)", "      Tests  21 passed (21)");
  }
  lines.push(`   Start at  09:${random.int(10, 59)}:${random.int(10, 59)}`, `   Duration  ${duration}ms`, "");
  return lines.join("\n");
}

const PACKAGES = [
  "vitest",
  "vite",
  "esbuild",
  "rollup",
  "typescript",
  "@types/node",
  "tinybench",
  "chai",
  "magic-string",
  "picocolors",
  "pathe",
  "std-env",
  "tinypool",
  "why-is-node-running",
  "postcss",
  "nanoid",
  "source-map-js",
  "debug",
  "ms",
  "cac",
];

/** A verbose `npm install` log of at least `bytes` bytes: the long tool output a budget must cut. */
export function npmInstallLog(random: Prng, bytes: number): string {
  const lines: string[] = [
    "npm verbose cli /usr/bin/node /usr/lib/node_modules/npm/bin/npm-cli.js",
    "npm info using npm@10.9.2",
    "npm info using node@v20.19.0",
  ];
  let size = 0;
  while (size < bytes) {
    const name = random.pick(PACKAGES);
    const version = `${random.int(0, 9)}.${random.int(0, 30)}.${random.int(0, 20)}`;
    const line = random.pick([
      `npm http fetch GET 200 https://registry.npmjs.org/${name} ${random.int(8, 400)}ms (cache revalidated)`,
      `npm verbose reify add ${name}@${version} node_modules/${name}`,
      `npm timing reifyNode:node_modules/${name} Completed in ${random.int(1, 90)}ms`,
      `npm sill placeDep ROOT ${name}@${version} OK for: query-tokenizer@0.3.0 want: ^${version}`,
      `npm info run esbuild@0.21.5 postinstall node_modules/esbuild node install.js`,
      `npm warn deprecated inflight@1.0.6: This module is not supported, and leaks memory. Do not use it.`,
    ]);
    lines.push(line);
    size += line.length + 1;
  }
  lines.push(
    "",
    `added ${random.int(180, 460)} packages, and audited ${random.int(460, 520)} packages in ${random.int(8, 40)}s`,
    "",
    "found 0 vulnerabilities",
  );
  return lines.join("\n");
}

export const PROMPTS = [
  "The parser test for the new `owner:` prefix fails. Can you find out why and fix it?",
  "Run the whole test suite and tell me what's broken.",
  "Add `owner:` and `team:` to the accepted prefixes and update the tests.",
  "Why does `parseToken` return undefined for an empty string? Make it return a clear error instead.",
  "Clean up the tokenizer: the operator detection is duplicated. Keep the behaviour identical.",
  "Install the dependencies again, something is off with esbuild.",
  "Here's a screenshot of the error I get in the playground. What's going on?",
  "Write a short section in the README about prefixes.",
  "Check the types with tsc and fix whatever it reports.",
  "Look at how other query languages handle quoted prefixes and suggest an approach.",
];

export const THOUGHTS = [
  "The failing assertion says the token kept its `owner:` text, so the prefix was not recognised. PREFIXES in src/prefix.ts only lists @, #, tag: and is:, which means `owner:` never matches. I should check whether anything else depends on that list before adding to it.",
  "Let me think about the order of the prefix checks. `stripPrefix` walks PREFIXES in order and returns on the first match, so a longer prefix that starts with a shorter one would be shadowed. None of the current ones overlap, but `team:` and `t` might if someone adds a single-letter prefix later.",
  "The test output shows 20 passing and 1 failing. Only the new-prefix test fails, so the tokenizer itself is fine; the fix belongs in prefix.ts, plus maybe an entry in the README.",
  "tsc complains about possibly-undefined array access because noUncheckedIndexedAccess is on. The cleanest fix is to use the iterator directly instead of indexing.",
  "Before editing I want to see every caller of parseToken so that changing its return type does not break anything silently.",
  "esbuild's postinstall downloads a platform binary; if the lockfile was generated on macOS the linux package might be missing. Reinstalling with a clean node_modules should fix it.",
];

export const ANSWERS = [
  "Fixed: `owner:` was missing from `PREFIXES` in `src/prefix.ts`. I added it (and kept the list sorted), and all 21 tests pass now.",
  "All three test files pass except `handles the new owner: prefix`, which fails because the prefix is not in the accepted list.",
  "Done. `owner:` and `team:` are accepted, with two new tests; the suite is green.",
  '`parseToken("")` now throws `EmptyInputError` with a message that names the input, and the docs say so.',
  "The tokenizer now uses one `OPERATORS` set for detection; behaviour is unchanged and the tests still pass.",
  "Reinstalled from a clean `node_modules`; esbuild's binary for linux-x64 is present now and the build works.",
];
