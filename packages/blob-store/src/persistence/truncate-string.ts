/** Appended to a string cut short for persistence (after a blank line, as existing session files have it). */
export const TRUNCATION_NOTICE = "[Session persistence truncated large content]";

/** A part of a string, by UTF-16 offsets: `start` included, `end` excluded. */
export interface TextSpan {
  start: number;
  end: number;
}

/**
 * Keeps the first `maxChars` UTF-16 units, never splitting a surrogate pair, then appends the
 * notice. Characters inside `whole` (sorted, non-overlapping spans: images embedded in the text)
 * do not count and are never split: every span that starts before the cut is kept entire.
 */
export function truncateForPersistence(
  value: string,
  maxChars: number,
  whole: readonly TextSpan[] = [],
): string {
  let budget = maxChars;
  let position = 0;
  for (const span of [...whole, { start: value.length, end: value.length }]) {
    const text = span.start - position;
    if (text > budget) return cutAt(value, position + budget);
    budget -= text;
    position = span.end;
  }
  return value;
}

function cutAt(value: string, end: number): string {
  const last = value.charCodeAt(end - 1);
  const safeEnd = last >= 0xd800 && last <= 0xdbff ? end - 1 : end;
  return `${value.slice(0, safeEnd)}\n\n${TRUNCATION_NOTICE}`;
}
