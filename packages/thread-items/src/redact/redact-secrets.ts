import { SECRET_PATTERNS } from "./secret-patterns.js";

/** Where a secret was taken out of an item: its kind, the string's path and where its placeholder starts. */
interface Redaction {
  kind: string;
  /** The string's path in the item, e.g. `metadata.tool.output` or `content.0.text`. */
  path: string;
  /** Offset of the placeholder in that string, in UTF-16 code units. */
  index: number;
}

/** What a secret is replaced with: its kind, never a part of it. */
const redactedPlaceholder = (kind: string) => `[REDACTED:${kind}]`;

interface Found {
  start: number;
  end: number;
  kind: string;
}

/** Every secret in `text`, in order, none overlapping (the earlier start wins, then the longer). */
function findSecrets(text: string): Found[] {
  const found: Found[] = [];
  for (const { kind, pattern, value } of SECRET_PATTERNS) {
    for (const match of text.matchAll(pattern)) {
      const secret = value ? match.groups![value]! : match[0];
      const start = match.index! + (value ? match[0].indexOf(secret) : 0);
      found.push({ start, end: start + secret.length, kind });
    }
  }
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Found[] = [];
  for (const secret of found) {
    if (secret.start >= (kept.at(-1)?.end ?? 0)) kept.push(secret);
  }
  return kept;
}

function redactText(text: string, path: string, redactions: Redaction[]): string {
  const secrets = findSecrets(text);
  if (secrets.length === 0) return text;
  let out = "";
  let from = 0;
  for (const { start, end, kind } of secrets) {
    out += text.slice(from, start);
    redactions.push({ kind, path, index: out.length });
    out += redactedPlaceholder(kind);
    from = end;
  }
  return out + text.slice(from);
}

function walk(value: unknown, path: string, redactions: Redaction[]): unknown {
  if (typeof value === "string") return redactText(value, path, redactions);
  if (typeof value !== "object" || value === null) return value;
  const at = (key: string) => (path === "" ? key : `${path}.${key}`);
  if (Array.isArray(value)) {
    const copy = value.map((element, index) => walk(element, at(String(index)), redactions));
    return copy.some((element, index) => element !== value[index]) ? copy : value;
  }
  let copy: Record<string, unknown> | undefined;
  for (const [key, element] of Object.entries(value)) {
    const clean = walk(element, at(key), redactions);
    if (clean !== element) copy = { ...(copy ?? value), [key]: clean };
  }
  return copy ?? value;
}

/**
 * `value` (a JSON value: a thread item) with every secret of a known shape in its strings
 * replaced by `[REDACTED:<kind>]`, and where each was; `value` itself when there was none.
 * Object keys are left as they are: a secret is a value.
 */
export function redactSecrets<T>(value: T): { value: T; redactions: Redaction[] } {
  const redactions: Redaction[] = [];
  return { value: walk(value, "", redactions) as T, redactions };
}
