const UNITS = ["KiB", "MiB", "GiB", "TiB"] as const;

/** A size for people, in 1,024-byte units named as such (IEC) with one decimal: `512 B`, `1.0 MiB`, `1.5 GiB`. */
export function formatSize(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1024) return `${Math.max(0, Math.round(bytes || 0))} B`;
  let value = bytes / 1024;
  let unit = 0;
  // Compare the rounded figure, so that 1,048,575 bytes reads "1.0 MiB", never "1024.0 KiB".
  while (Math.round(value * 10) / 10 >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${UNITS[unit]}`;
}
