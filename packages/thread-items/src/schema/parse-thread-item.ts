import { describeValue, StowageError } from "@stowage/core";
import type { z } from "zod";
import { promptSchema, THREAD_ITEM_TYPES, type ThreadItem, threadItemSchema } from "./thread-item-schema.js";

function pathText(path: readonly PropertyKey[]): string {
  let text = "";
  for (const key of path) {
    if (typeof key === "number") text += `[${key}]`;
    else text += text === "" ? String(key) : `.${String(key)}`;
  }
  return text === "" ? "(root)" : text;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (typeof value !== "object" || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

function describeIssue(value: unknown, issue: z.core.$ZodIssue): string {
  const at = pathText(issue.path);
  if (issue.code === "invalid_union" && at === "metadata.type") {
    const accepted = THREAD_ITEM_TYPES.map((type) => `"${type}"`).join(", ");
    return `metadata.type: must be one of ${accepted}, or absent for a plain user post, got ${describeValue(valueAt(value, issue.path))}`;
  }
  return `${at}: ${issue.message}`;
}

/** Why `value` is not a valid thread item (the first problem found), or undefined when it is. */
export function threadItemProblem(value: unknown): string | undefined {
  const result = threadItemSchema.safeParse(value);
  if (result.success) return undefined;
  const [first] = result.error.issues;
  return first ? describeIssue(value, first) : "does not match the thread item schema";
}

/** Why `prompt` is not a valid pending-prompt payload, or undefined when it is. */
export function promptProblem(prompt: unknown): string | undefined {
  const result = promptSchema.safeParse(prompt);
  if (result.success) return undefined;
  const [first] = result.error.issues;
  return first ? describeIssue(prompt, first) : "does not match the prompt schema";
}

/** True when `value` matches the thread item schema. */
export function isThreadItem(value: unknown): value is ThreadItem {
  return threadItemSchema.safeParse(value).success;
}

/**
 * Checks `value` against the thread item schema and returns it unchanged (not a copy: unknown
 * fields are kept). Throws INVALID_INPUT naming the first offending field.
 */
export function parseThreadItem(value: unknown, what = "thread item"): ThreadItem {
  const problem = threadItemProblem(value);
  if (problem) throw new StowageError("INVALID_INPUT", `${what} is invalid at ${problem}`);
  return value as ThreadItem;
}
