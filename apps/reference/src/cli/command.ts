import { type ParseArgsConfig, parseArgs } from "node:util";
import { StowageError } from "@stowage/core";

export type OptionSpec = NonNullable<ParseArgsConfig["options"]>[string] & {
  description: string;
  placeholder?: string;
};

export interface CommandContext {
  /** Where the command prints; the tests capture it. */
  out: (line: string) => void;
  env: Record<string, string | undefined>;
  cwd: string;
}

export interface Command {
  name: string;
  summary: string;
  /** Positional arguments, as shown in the usage line, e.g. `<file…>`. */
  args?: string;
  options?: Record<string, OptionSpec>;
  subcommands?: Command[];
  run?(
    input: { values: Record<string, unknown>; positionals: string[] },
    context: CommandContext,
  ): Promise<void>;
}

function helpFor(command: Command, path: string[]): string {
  const lines = [
    `${command.summary}`,
    "",
    `Usage: ${[...path, command.name].join(" ")}${command.subcommands ? " <command>" : ""}${command.args ? ` ${command.args}` : ""}${command.options ? " [options]" : ""}`,
  ];
  if (command.subcommands) {
    lines.push("", "Commands:");
    const width = Math.max(...command.subcommands.map((sub) => sub.name.length));
    for (const sub of command.subcommands) lines.push(`  ${sub.name.padEnd(width)}  ${sub.summary}`);
    lines.push("", `Run "${[...path, command.name].join(" ")} <command> --help" for a command's options.`);
  }
  const options = Object.entries(command.options ?? {});
  if (options.length > 0) {
    lines.push("", "Options:");
    for (const [name, spec] of options) {
      const flag = `--${name}${spec.type === "string" ? ` <${spec.placeholder ?? "value"}>` : ""}`;
      const fallback = spec.default === undefined ? "" : ` (default: ${String(spec.default)})`;
      lines.push(`  ${flag.padEnd(28)} ${spec.description}${fallback}`);
    }
  }
  lines.push("  --help                       show this help");
  return lines.join("\n");
}

/** Finds the command named by `argv`, parses its options strictly, and runs it. */
export async function runCommand(root: Command, argv: string[], context: CommandContext): Promise<void> {
  let command = root;
  const path: string[] = [];
  let rest = argv;
  while (command.subcommands && rest[0] && !rest[0].startsWith("-")) {
    const next = command.subcommands.find((sub) => sub.name === rest[0]);
    if (!next) {
      throw new StowageError("INVALID_INPUT", `unknown command "${rest[0]}"\n\n${helpFor(command, path)}`);
    }
    path.push(command.name);
    command = next;
    rest = rest.slice(1);
  }
  if (rest.includes("--help") || rest.includes("-h") || !command.run) {
    context.out(helpFor(command, path));
    return;
  }
  const specs = Object.fromEntries(
    Object.entries(command.options ?? {}).map(([name, { description: _, placeholder: __, ...spec }]) => [
      name,
      spec,
    ]),
  );
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: rest, options: specs, allowPositionals: true, strict: true });
  } catch (err) {
    throw new StowageError("INVALID_INPUT", `${(err as Error).message}\n\n${helpFor(command, path)}`);
  }
  await command.run(
    { values: parsed.values as Record<string, unknown>, positionals: parsed.positionals },
    context,
  );
}
