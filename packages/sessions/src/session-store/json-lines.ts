/**
 * `lines` as UTF-8, each followed by `\n` (the last one too unless `finalNewline` is false),
 * written into one buffer: `into` when it is large enough (the result is then a view of it),
 * else a new one. Joining the lines into one string first and encoding that costs twice as much:
 * one line outside Latin-1 makes the whole joined string two bytes a character, and every pass
 * over it (join, length, encode) runs at that width.
 */
export function encodeJsonLines(
  lines: readonly string[],
  options: { finalNewline?: boolean; into?: Buffer } = {},
): Buffer {
  const finalNewline = options.finalNewline ?? true;
  const lengths = new Array<number>(lines.length);
  let total = finalNewline ? lines.length : Math.max(0, lines.length - 1);
  for (let i = 0; i < lines.length; i++) {
    lengths[i] = Buffer.byteLength(lines[i]!);
    total += lengths[i]!;
  }
  const bytes =
    options.into && options.into.byteLength >= total
      ? options.into.subarray(0, total)
      : Buffer.allocUnsafe(total);
  let offset = 0;
  for (let i = 0; i < lines.length; i++) {
    offset += bytes.write(lines[i]!, offset, lengths[i]!, "utf8");
    if (offset < total) bytes[offset++] = 0x0a;
  }
  return bytes;
}
