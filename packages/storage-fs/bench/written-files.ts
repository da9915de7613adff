// The files a case's fresh state needs, written before its timed run (untimed).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Writes `count` files named `nameOf(i)` holding `body` into `directory` (made if missing), with
 * synchronous calls: the same files a store's put, unstorage's setItemRaw or a `writeFile` leaves
 * (the store's temp-file renames leave no cost behind: a listing reads both alike), at a tenth of
 * the time. On the 2-core VM these benches run on, 10,000 small files took 3.3-5.0 s through the
 * asynchronous calls (each a trip through the thread pool) and 0.3 s through these: the writes, not
 * the timed runs, were most of the bench's length.
 */
export function writeFilesSync(
  directory: string,
  count: number,
  nameOf: (i: number) => string,
  body: Uint8Array,
): void {
  mkdirSync(directory, { recursive: true });
  for (let i = 0; i < count; i++) writeFileSync(join(directory, nameOf(i)), body);
}
