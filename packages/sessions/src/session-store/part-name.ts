/**
 * Part names, `part-<first seq>-<last seq>.jsonl` with 12 digits each (see `part-object.ts`): here
 * apart from the part format, so that the key checks every backend shares can refuse a subpath
 * segment named like a part without importing the format.
 */
export const PART_NAME_PATTERN = /^part-(\d{12})-(\d{12})\.jsonl$/;
const SEQ_DIGITS = 12;
/** Highest sequence number a part name can carry. */
export const MAX_PART_SEQ = 10 ** SEQ_DIGITS - 1;

export const partName = (first: number, last: number) =>
  `part-${String(first).padStart(SEQ_DIGITS, "0")}-${String(last).padStart(SEQ_DIGITS, "0")}.jsonl`;
/** Every part name has this many characters (ASCII). */
export const PART_NAME_LENGTH = partName(1, 1).length;

/** The part named by the last segment of `key`, or undefined when it is not a part name. */
export function parsePartName(name: string): { first: number; last: number } | undefined {
  const match = PART_NAME_PATTERN.exec(name);
  if (!match) return undefined;
  const first = Number(match[1]);
  const last = Number(match[2]);
  return first >= 1 && last >= first ? { first, last } : undefined;
}
