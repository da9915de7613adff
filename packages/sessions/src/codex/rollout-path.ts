/**
 * A rollout's path relative to `$CODEX_HOME/sessions`, as Codex writes it:
 * `YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<sessionId>.jsonl`. The day folder and the time are
 * one local time, when the session started, so the folder's date is the name's.
 */
const ROLLOUT_PATH_PATTERN =
  /^(\d{4})\/(\d{2})\/(\d{2})\/rollout-(\d{4})-(\d{2})-(\d{2})T(\d{2})-(\d{2})-(\d{2})-(.+)\.jsonl$/;

/** A rollout file name's start: `rollout-YYYY-MM-DDThh-mm-ss-`, then the session id. */
const ROLLOUT_NAME_PATTERN = /^rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-(.+)\.jsonl$/;

/** Folder names of the date levels under `sessions/`. */
export const YEAR_PATTERN = /^\d{4}$/;
export const MONTH_OR_DAY_PATTERN = /^\d{2}$/;

/** The session id in a rollout file name, or undefined when the name is not a rollout's. */
export function sessionIdOfRolloutName(name: string): string | undefined {
  return ROLLOUT_NAME_PATTERN.exec(name)?.[1];
}

/** Whether the digits name a day of the calendar (`2026-02-29` does not, `2028-02-29` does). */
function isCalendarDay(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/**
 * Why `path` is not `sessionId`'s rollout path relative to `$CODEX_HOME/sessions`, or undefined:
 * the shape above, a real day (month 01–12, a day the month has) and time (00:00:00–23:59:59),
 * the same day in the folders and the name, and this session's id.
 */
export function codexRolloutPathProblem(path: string, sessionId: string): string | undefined {
  const expected = `"YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-${sessionId}.jsonl"`;
  const match = ROLLOUT_PATH_PATTERN.exec(path);
  if (!match) return `must be ${expected}`;
  const [folderYear, folderMonth, folderDay, year, month, day, hour, minute, second] = match
    .slice(1, 10)
    .map(Number) as [number, number, number, number, number, number, number, number, number];
  if (!isCalendarDay(folderYear, folderMonth, folderDay) || !isCalendarDay(year, month, day)) {
    return `must be ${expected} with a real date`;
  }
  if (hour > 23 || minute > 59 || second > 59) return `must be ${expected} with a real time of day`;
  if (folderYear !== year || folderMonth !== month || folderDay !== day) {
    return `must be ${expected} in the day folder of its own date`;
  }
  return match[10] === sessionId ? undefined : `must be ${expected} (a rollout of another session)`;
}
