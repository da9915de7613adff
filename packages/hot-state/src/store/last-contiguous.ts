/**
 * The highest n ≥ `known` with `exists(n)`, for numbers written contiguously from 1 (versions,
 * turns): `known` must exist (or be 0). Gallops forward (known+1, +2, +4…) then bisects, so a
 * fresh reader finds the end of a long history in about 2·log2(distance) probes.
 */
export async function lastContiguous(
  known: number,
  max: number,
  exists: (n: number) => Promise<boolean>,
): Promise<number> {
  let low = known;
  let step = 1;
  let high = low + step;
  while (high <= max && (await exists(high))) {
    low = high;
    step *= 2;
    high = Math.min(low + step, max + 1);
  }
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (await exists(middle)) low = middle;
    else high = middle;
  }
  return low;
}
