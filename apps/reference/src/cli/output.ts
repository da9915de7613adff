import { Option } from "commander";
import type { CommandContext } from "./context.js";

/** `--json`: print the result as one JSON document instead of lines for people. */
export function jsonOption(): Option {
  return new Option("--json", "print the result as JSON");
}

/** Prints `value` as JSON with `--json`, else the lines for people. Both go to stdout. */
export function printResult(
  context: CommandContext,
  json: boolean | undefined,
  value: unknown,
  lines: () => string[],
): void {
  if (json) context.out(JSON.stringify(value, null, 2));
  else for (const line of lines()) context.out(line);
}
