/** Appended to a string cut short for persistence (after a blank line, as existing session files have it). */
export const TRUNCATION_NOTICE = "[Session persistence truncated large content]";

/** Keeps the first `maxChars` UTF-16 units, never splitting a surrogate pair, then appends the notice. */
export function truncateForPersistence(value: string, maxChars: number): string {
  if (value.length <= maxChars) return value;
  let end = maxChars;
  const last = value.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${value.slice(0, end)}\n\n${TRUNCATION_NOTICE}`;
}
