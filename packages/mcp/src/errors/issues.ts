/** What a schema check reports of one problem: zod's issue, of the SDK's copy of zod or ours. */
export interface SchemaIssue {
  path: readonly PropertyKey[];
  message: string;
}

/** Issues named in a message; the rest are counted. */
export const SHOWN_ISSUES = 2;
/** Characters of one issue shown: zod's messages are short, but a path or an unknown key is the caller's. */
const MAX_ISSUE_CHARS = 80;

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** One issue in a few words: `uri: Invalid input: expected string, received object`. */
export function describeIssue(issue: SchemaIssue): string {
  const path = issue.path.map((part) => cut(String(part), 24)).join(".") || "(input)";
  return cut(`${path}: ${issue.message}`, MAX_ISSUE_CHARS);
}

/**
 * Schema issues as one short line: the first few, each cut, and how many more. Never zod's own
 * message, which is the JSON of every issue (a validation dump) and repeats unknown keys whole.
 */
export function describeIssues(issues: readonly SchemaIssue[]): string {
  const shown = issues.slice(0, SHOWN_ISSUES).map(describeIssue).join("; ");
  const more = issues.length > SHOWN_ISSUES ? ` (and ${issues.length - SHOWN_ISSUES} more)` : "";
  return `${shown}${more}`;
}
