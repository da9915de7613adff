import { StowageError } from "@stowage/core";

/** `?trashDays=` of a deletion: a non-negative number of days, INVALID_INPUT naming what was given otherwise. */
export function trashDaysQuery(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(raw)) {
    throw new StowageError(
      "INVALID_INPUT",
      `trashDays must be a number of days (0 deletes at once), got ${JSON.stringify(raw.slice(0, 64))}`,
    );
  }
  return Number(raw);
}
