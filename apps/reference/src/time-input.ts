// Times and spans as the CLI and the HTTP API take them, one rule for both.

/** An ISO 8601 date or date-time, nothing around it (`new Date` alone accepts much more). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/;
/** A span: a whole number of days, hours or minutes (`3d`, `12h`, `90m`), at most 5 digits. */
const SPAN = /^(\d{1,5})([dhm])$/;
const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const;

/** `value` as a time when it is an ISO 8601 date or date-time, else undefined. */
export function parseIsoTime(value: string): Date | undefined {
  if (!ISO_TIME.test(value)) return undefined;
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? undefined : at;
}

/** `value` as milliseconds when it is a span (`3d`, `12h`, `90m`), else undefined. */
export function parseSpanMs(value: string): number | undefined {
  const span = SPAN.exec(value);
  return span ? Number(span[1]) * UNIT_MS[span[2] as keyof typeof UNIT_MS] : undefined;
}
