/**
 * What a README gives a new user: its TypeScript examples and its install lines.
 *
 * A ```ts block must say what it is with one tag after the language:
 * - `runnable`: type-checked and run (it needs no server);
 * - `typecheck`: type-checked only (it needs a server, credentials or an agent).
 * An untagged ```ts block is a problem: every example is checked, none is pasted unseen.
 */

/** How an example is checked. */
export type ExampleMode = "run" | "typecheck";

/** One fenced TypeScript example of a README. */
export interface ReadmeExample {
  /** 1-based line of the opening fence. */
  line: number;
  mode: ExampleMode;
  code: string;
  /** Packages the example imports (`@scope/name` or `name`; `node:` and relative imports left out). */
  imports: string[];
}

/** What a README holds, and what is wrong with it. */
export interface ReadmeScan {
  examples: ReadmeExample[];
  /** Every package named by an `npm install` line of a shell block, in order, without repeats. */
  installs: string[];
  /** The version ranges the install lines give (`vitest@^4` → `{ vitest: "^4" }`). */
  versions: Record<string, string>;
  /** Human-readable problems with their line: untagged or unclosed blocks, imports not installed. */
  problems: string[];
}

const TS_LANGUAGES = new Set(["ts", "typescript"]);
/** Code a reader could paste that the check would not type-check: examples are written as `ts`. */
const UNCHECKED_CODE_LANGUAGES = new Set(["js", "javascript", "mjs", "cjs", "jsx", "tsx", "mts", "cts"]);
const SHELL_LANGUAGES = new Set(["sh", "bash", "shell", "console"]);
const MODE_BY_TAG: Record<string, ExampleMode> = { runnable: "run", typecheck: "typecheck" };

interface Fence {
  marker: string;
  language: string;
  tags: string[];
  line: number;
  body: string[];
}

/** Reads a README's examples and install lines; never throws on malformed Markdown. */
export function scanReadme(markdown: string): ReadmeScan {
  const problems: string[] = [];
  const examples: ReadmeExample[] = [];
  const installs: string[] = [];
  const versions: Record<string, string> = {};
  for (const fence of fencedBlocks(markdown, problems)) {
    if (SHELL_LANGUAGES.has(fence.language)) {
      for (const argument of installArguments(fence.body)) {
        const name = packageName(argument);
        if (!installs.includes(name)) installs.push(name);
        if (argument.length > name.length + 1) versions[name] = argument.slice(name.length + 1);
      }
      continue;
    }
    if (UNCHECKED_CODE_LANGUAGES.has(fence.language)) {
      problems.push(
        `line ${fence.line}: a ${fence.language} block is never checked; write the example as a ts block`,
      );
      continue;
    }
    if (!TS_LANGUAGES.has(fence.language)) continue;
    const modes = fence.tags.map((tag) => MODE_BY_TAG[tag]).filter((mode) => mode !== undefined);
    if (modes.length !== 1 || fence.tags.length !== 1) {
      problems.push(
        `line ${fence.line}: a ts block needs exactly one tag, "runnable" or "typecheck" (got "${fence.tags.join(" ")}")`,
      );
      continue;
    }
    const code = fence.body.join("\n");
    examples.push({ line: fence.line, mode: modes[0] as ExampleMode, code, imports: importedPackages(code) });
  }
  for (const example of examples) {
    for (const name of example.imports) {
      if (!installs.includes(name)) {
        problems.push(
          `line ${example.line}: imports ${name}, which no npm install line of the README installs`,
        );
      }
    }
  }
  return { examples, installs, versions, problems };
}

/** CommonMark fences: three or more backticks or tildes, closed by a run of the same character at least as long. */
function fencedBlocks(markdown: string, problems: string[]): Fence[] {
  const fences: Fence[] = [];
  let open: Fence | undefined;
  const lines = markdown.split(/\r?\n/);
  lines.forEach((text, index) => {
    if (open) {
      const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(text)?.[1] ?? "";
      if (close[0] === open.marker[0] && close.length >= open.marker.length) {
        fences.push(open);
        open = undefined;
      } else {
        open.body.push(text);
      }
      return;
    }
    const start = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)(.*)$/.exec(text);
    if (!start) return;
    const [, marker = "", language = "", rest = ""] = start;
    if (marker.startsWith("`") && rest.includes("`")) return; // an inline code span, not a fence
    const tags = rest.trim().split(/\s+/).filter(Boolean);
    open = { marker, language: language.toLowerCase(), tags, line: index + 1, body: [] };
  });
  if (open) problems.push(`line ${open.line}: the code block is never closed`);
  return fences;
}

/** The arguments of `npm install` (or `npm i`), flags and comments left out: `name` or `name@range`. */
function installArguments(lines: readonly string[]): string[] {
  const names: string[] = [];
  for (const line of lines) {
    const command = line.replace(/#.*$/, "").trim();
    const match = /^(?:\$\s*)?npm\s+(?:install|i|add)\s+(.*)$/.exec(command);
    if (!match?.[1]) continue;
    for (const word of match[1].split(/\s+/)) {
      if (word && !word.startsWith("-")) names.push(word);
    }
  }
  return names;
}

/** The package part of an import specifier or an install argument (`@scope/name/sub@1` → `@scope/name`). */
export function packageName(specifier: string): string {
  const parts = specifier.split("/");
  const name = specifier.startsWith("@") ? `${parts[0]}/${parts[1] ?? ""}` : (parts[0] ?? "");
  const at = name.indexOf("@", 1);
  return at === -1 ? name : name.slice(0, at);
}

function importedPackages(code: string): string[] {
  const names: string[] = [];
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["']([^"']+)["']/gm;
  for (const match of code.matchAll(pattern)) {
    const specifier = match[1] ?? "";
    if (specifier.startsWith("node:") || specifier.startsWith(".") || specifier.startsWith("/")) continue;
    const name = packageName(specifier);
    if (!names.includes(name)) names.push(name);
  }
  return names;
}
