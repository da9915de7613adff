import { StowageError } from "@stowage/core";
import type { z } from "zod";

/** Most issues quoted in a message; all of them are in `details.issues`. */
const MAX_ISSUES_IN_MESSAGE = 5;

function issuePath(path: readonly PropertyKey[]): string {
  let text = "";
  for (const part of path) text += typeof part === "number" ? `[${part}]` : `.${String(part)}`;
  return text === "" ? "(root)" : text.slice(text.startsWith(".") ? 1 : 0);
}

/** An INVALID_INPUT error that names every field that failed and why. */
function validationError(what: string, error: z.ZodError): StowageError {
  const issues = error.issues.map((issue) => ({ path: issuePath(issue.path), message: issue.message }));
  const shown = issues
    .slice(0, MAX_ISSUES_IN_MESSAGE)
    .map((issue) => `${issue.path}: ${issue.message}`)
    .join("; ");
  const more =
    issues.length > MAX_ISSUES_IN_MESSAGE ? ` (and ${issues.length - MAX_ISSUES_IN_MESSAGE} more)` : "";
  return new StowageError("INVALID_INPUT", `${what} is invalid: ${shown}${more}`, {
    details: { issues },
  });
}

/** Parses `value` with `schema`, throwing {@link validationError} on failure. */
export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown, what: string): z.output<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw validationError(what, result.error);
  return result.data;
}

/** INVALID_INPUT with `message`: what was wrong with the input and what is accepted. */
export function invalidInput(message: string, details?: Record<string, unknown>): StowageError {
  return new StowageError("INVALID_INPUT", message, details ? { details } : {});
}
