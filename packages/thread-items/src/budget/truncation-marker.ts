/**
 * The text that stands for the bytes cut from a field: `…[truncated <N> bytes; see <path>]…`,
 * where `N` is the exact number of UTF-8 bytes removed and `path` the local thread log.
 */
export function truncationMarker(removedBytes: number, localLogPath: string): string {
  return `…[truncated ${removedBytes} bytes; see ${localLogPath}]…`;
}
