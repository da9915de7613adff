import { screenshotPng } from "./png.js";
import type { Prng } from "./prng.js";
import {
  ANSWERS,
  CWD,
  npmInstallLog,
  numbered,
  PROJECT_FILES,
  PROJECT_PATHS,
  PROMPTS,
  THOUGHTS,
  vitestOutput,
} from "./project-text.js";

/**
 * One agent session, independent of any format: the fixture writers render it as a Claude Code
 * transcript, a Claude Agent SDK message stream, and a Codex rollout.
 */
export interface ToolStep {
  kind: "tool";
  /** The call as Claude Code's tools take it. */
  claude: { name: string; input: Record<string, unknown> };
  /** The closest Codex call: a function call (JSON arguments), a freeform custom tool, or a web search. */
  codex: { type: "function_call" | "custom_tool_call" | "web_search_call"; name: string; input: unknown };
  output: string;
  /** A result that is an image (reading a PNG): base64. */
  image?: string;
  isError: boolean;
}

export type Step = { kind: "thinking"; text: string } | { kind: "text"; text: string } | ToolStep;

export interface Turn {
  prompt: string;
  /** A screenshot pasted with the prompt: base64 PNG. */
  image?: string;
  steps: Step[];
  answer: string;
  /** The user pressed Esc during the turn. */
  interrupted: boolean;
  /** Context was compacted before this turn. */
  compactedBefore: boolean;
}

export interface ScriptOptions {
  turns: number;
  /** Bytes of the `npm install` log in the install turn (0: no such turn). */
  longOutputBytes: number;
  /** Include pasted and read screenshots. */
  images: boolean;
  /** Tool calls per turn, inclusive range. */
  toolsPerTurn: [number, number];
}

const shell = (command: string) => ({
  type: "function_call" as const,
  name: "shell",
  input: { command: ["bash", "-lc", command], workdir: CWD, timeout_ms: 120000 },
});

function readStep(random: Prng): ToolStep {
  const path = random.pick(PROJECT_PATHS);
  const content = PROJECT_FILES[path]!;
  return {
    kind: "tool",
    claude: { name: "Read", input: { file_path: `${CWD}/${path}` } },
    codex: shell(`sed -n '1,200p' ${path}`),
    output: numbered(content),
    isError: false,
  };
}

function grepStep(random: Prng): ToolStep {
  const pattern = random.pick(["parseToken", "PREFIXES", "stripPrefix", "tokenize\\(", "owner:"]);
  const hits = PROJECT_PATHS.flatMap((path) =>
    PROJECT_FILES[path]!.split("\n")
      .map((line, index) => ({ line, index }))
      .filter(({ line }) => line.includes(pattern.replace("\\", "")))
      .map(({ line, index }) => `${path}:${index + 1}:${line}`),
  );
  return {
    kind: "tool",
    claude: { name: "Grep", input: { pattern, path: CWD, output_mode: "content", "-n": true } },
    codex: shell(`rg -n "${pattern}"`),
    output: hits.length > 0 ? hits.join("\n") : "No matches found",
    isError: false,
  };
}

function globStep(): ToolStep {
  return {
    kind: "tool",
    claude: { name: "Glob", input: { pattern: "**/*.ts", path: CWD } },
    codex: shell("rg --files -g '*.ts'"),
    output: PROJECT_PATHS.map((path) => `${CWD}/${path}`).join("\n"),
    isError: false,
  };
}

function testStep(random: Prng, failing: boolean): ToolStep {
  const output = vitestOutput(random, failing);
  return {
    kind: "tool",
    claude: { name: "Bash", input: { command: "npm test", description: "Run the test suite" } },
    codex: shell("npm test"),
    output: failing
      ? `${output}\nnpm error Lifecycle script \`test\` failed with error: exit code 1`
      : output,
    isError: failing,
  };
}

function gitStep(random: Prng): ToolStep {
  const diff = random.chance(0.5);
  return {
    kind: "tool",
    claude: {
      name: "Bash",
      input: diff
        ? { command: "git diff --stat", description: "Show changed files" }
        : { command: "git status --short", description: "Show working tree status" },
    },
    codex: shell(diff ? "git diff --stat" : "git status --short"),
    output: diff
      ? " src/prefix.ts       | 2 +-\n test/parser.test.ts | 6 ++++++\n 2 files changed, 7 insertions(+), 1 deletion(-)"
      : " M src/prefix.ts\n M test/parser.test.ts\n?? notes/prefixes.md",
    isError: false,
  };
}

function tscStep(random: Prng): ToolStep {
  const clean = random.chance(0.5);
  return {
    kind: "tool",
    claude: { name: "Bash", input: { command: "npx tsc --noEmit", description: "Type-check the project" } },
    codex: shell("npx tsc --noEmit"),
    output: clean
      ? ""
      : "src/tokenizer.ts(12,11): error TS2532: Object is possibly 'undefined'.\nsrc/parser.ts(31,10): error TS7006: Parameter 'prefix' implicitly has an 'any' type.",
    isError: !clean,
  };
}

function editStep(random: Prng): ToolStep {
  const adding = random.pick(['"owner:"', '"team:"', '"label:"']);
  const old = 'export const PREFIXES = ["@", "#", "tag:", "is:"] as const;';
  const next = `export const PREFIXES = ["@", "#", "tag:", "is:", ${adding}] as const;`;
  const patch = `*** Begin Patch\n*** Update File: src/prefix.ts\n@@\n-${old}\n+${next}\n*** End Patch\n`;
  return {
    kind: "tool",
    claude: { name: "Edit", input: { file_path: `${CWD}/src/prefix.ts`, old_string: old, new_string: next } },
    codex: { type: "custom_tool_call", name: "apply_patch", input: patch },
    output: `The file ${CWD}/src/prefix.ts has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n     1→/** Prefixes the query language accepts before a field name. */\n     2→${next}\n     3→`,
    isError: false,
  };
}

function writeStep(): ToolStep {
  const content =
    "# Prefixes\n\nA field name may carry a prefix: `@user`, `#tag`, `tag:name`, `is:state`, `owner:name`.\nUnknown prefixes are reported as errors, never silently dropped.\n";
  return {
    kind: "tool",
    claude: { name: "Write", input: { file_path: `${CWD}/notes/prefixes.md`, content } },
    codex: {
      type: "custom_tool_call",
      name: "apply_patch",
      input: `*** Begin Patch\n*** Add File: notes/prefixes.md\n${content
        .split("\n")
        .map((line) => `+${line}`)
        .join("\n")}\n*** End Patch\n`,
    },
    output: `File created successfully at: ${CWD}/notes/prefixes.md`,
    isError: false,
  };
}

function todoStep(random: Prng): ToolStep {
  const todos = [
    {
      content: "Reproduce the failing prefix test",
      status: "completed",
      activeForm: "Reproducing the failing prefix test",
    },
    {
      content: "Add the prefix to PREFIXES",
      status: random.pick(["completed", "in_progress"]),
      activeForm: "Adding the prefix",
    },
    { content: "Run the full suite", status: "pending", activeForm: "Running the full suite" },
  ];
  return {
    kind: "tool",
    claude: { name: "TodoWrite", input: { todos } },
    codex: {
      type: "function_call",
      name: "update_plan",
      input: { plan: todos.map((todo) => ({ step: todo.content, status: todo.status })) },
    },
    output:
      "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable",
    isError: false,
  };
}

function taskStep(): ToolStep {
  return {
    kind: "tool",
    claude: {
      name: "Task",
      input: {
        description: "Find every caller of parseToken",
        prompt:
          "List every call site of parseToken in the repository with file and line, and say what each expects back.",
        subagent_type: "Explore",
      },
    },
    codex: shell('rg -n "parseToken\\("'),
    output:
      'parseToken is called in two places:\n- src/parser.ts:31 — defines it; returns the first token or undefined.\n- test/parser.test.ts:21 — expects a number token for "  42 apples".\nNo other callers; changing the empty-input behaviour only affects the tests.',
    isError: false,
  };
}

function fetchStep(): ToolStep {
  return {
    kind: "tool",
    claude: {
      name: "WebFetch",
      input: {
        url: "https://docs.github.com/en/search-github/github-code-search/understanding-github-code-search-syntax",
        prompt: "How are qualifiers with quotes handled?",
      },
    },
    codex: {
      type: "web_search_call",
      name: "web_search",
      input: { type: "search", query: "github code search qualifier quoted value syntax" },
    },
    output:
      'Qualifiers take the form `name:value`; a value with spaces must be quoted (`path:"my docs"`). A qualifier without a value is a syntax error. Negation uses a leading `-`.',
    isError: false,
  };
}

function imageStep(random: Prng): ToolStep {
  return {
    kind: "tool",
    claude: { name: "Read", input: { file_path: `${CWD}/docs/playground-error.png` } },
    codex: { type: "function_call", name: "view_image", input: { path: "docs/playground-error.png" } },
    output: "",
    image: screenshotPng(random, 96, 64),
    isError: false,
  };
}

function installStep(random: Prng, bytes: number): ToolStep {
  return {
    kind: "tool",
    claude: {
      name: "Bash",
      input: {
        command: "rm -rf node_modules && npm install --loglevel silly",
        description: "Reinstall dependencies",
        timeout: 600000,
      },
    },
    codex: shell("rm -rf node_modules && npm install --loglevel silly"),
    output: npmInstallLog(random, bytes),
    isError: false,
  };
}

function randomTool(random: Prng, images: boolean): ToolStep {
  const roll = random.int(0, 99);
  if (roll < 24) return readStep(random);
  if (roll < 38) return grepStep(random);
  if (roll < 43) return globStep();
  if (roll < 55) return testStep(random, random.chance(0.4));
  if (roll < 63) return gitStep(random);
  if (roll < 68) return tscStep(random);
  if (roll < 82) return editStep(random);
  if (roll < 85) return writeStep();
  if (roll < 91) return todoStep(random);
  if (roll < 95) return taskStep();
  if (roll < 98 || !images) return fetchStep();
  return imageStep(random);
}

/** A deterministic session of `turns` turns. */
export function sessionScript(random: Prng, options: ScriptOptions): Turn[] {
  const turns: Turn[] = [];
  for (let index = 0; index < options.turns; index++) {
    const install = options.longOutputBytes > 0 && index === 5;
    const screenshot = options.images && index === 6;
    const steps: Step[] = [];
    if (random.chance(0.8)) steps.push({ kind: "thinking", text: random.pick(THOUGHTS) });
    if (install) steps.push(installStep(random, options.longOutputBytes));
    if (screenshot) steps.push(imageStep(random));
    const tools = random.int(...options.toolsPerTurn);
    for (let i = 0; i < tools; i++) {
      if (random.chance(0.25))
        steps.push({ kind: "text", text: "Let me look at the next piece before changing anything." });
      if (random.chance(0.15)) steps.push({ kind: "thinking", text: random.pick(THOUGHTS) });
      steps.push(randomTool(random, options.images));
    }
    turns.push({
      prompt: PROMPTS[index % PROMPTS.length]!,
      ...(screenshot ? { image: screenshotPng(random, 160, 100) } : {}),
      steps,
      answer: random.pick(ANSWERS),
      interrupted: index === 3,
      compactedBefore: index === 8,
    });
  }
  return turns;
}
