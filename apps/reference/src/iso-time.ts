/** An ISO 8601 date or date-time, nothing around it (`new Date` alone accepts much more). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** `value` as a time when it is an ISO 8601 date or date-time, else undefined. */
export function parseIsoTime(value: string): Date | undefined {
  if (!ISO_TIME.test(value)) return undefined;
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? undefined : at;
}
