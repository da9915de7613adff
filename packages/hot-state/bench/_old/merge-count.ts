/**
 * Byte-pair merging, counted: the number of tokens BPE leaves of one pre-tokenized piece, in
 * O(n log n) where the textbook loop (tiktoken's `_byte_pair_merge`, gpt-tokenizer's
 * `bytePairMerge`) is O(n²) — which is what made one long unbroken word take seconds.
 *
 * Exact, not an estimate: the textbook loop merges, at each step, the adjacent pair of parts with
 * the lowest rank, the leftmost one among equal ranks, then re-ranks the merged part's two
 * pairs. Here the pairs wait in a min-heap ordered by (rank, start offset), so the heap's top is
 * that same leftmost lowest pair. A merge only ever removes a boundary, so an entry whose pair
 * has since changed is recognised (its left part is gone, or the part after it no longer ends
 * where the entry says) and skipped. Same merges in the same order, so the same parts; pairs
 * that are not in the vocabulary are never merged by either.
 */
export function countMergedParts(
  length: number,
  rankOf: (start: number, end: number) => number | undefined,
  pairCache?: PairRankCache,
): number {
  const steps = mergedPartsInSlices(length, rankOf, pairCache);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/** Merges done between two pauses of {@link mergedPartsInSlices}: a few milliseconds of work. */
const MERGES_PER_SLICE = 16 * 1024;

/**
 * {@link countMergedParts}, pausing (yielding) after every {@link MERGES_PER_SLICE} merges, so
 * that a caller can let other work run during a long run's count.
 */
export function* mergedPartsInSlices(
  length: number,
  rankOf: (start: number, end: number) => number | undefined,
  pairCache?: PairRankCache,
): Generator<void, number, void> {
  if (length <= 1) return length;
  // Parts are identified by their start offset; `next[p]` is where the part after p starts.
  const next = new Int32Array(length + 1);
  const previous = new Int32Array(length + 1);
  const alive = new Uint8Array(length + 1);
  // Every part is a token of the vocabulary (a byte, or a merge of two tokens), so the rank of a
  // pair depends only on its two parts' ranks: the cache answers it without reading bytes.
  const partRank = new Int32Array(length);
  for (let i = 0; i <= length; i++) {
    next[i] = i + 1;
    previous[i] = i - 1;
    alive[i] = 1;
  }
  for (let i = 0; i < length; i++) partRank[i] = rankOf(i, i + 1) ?? -1;
  const heap = createPairHeap(length);

  const pairRank = (start: number, middle: number, end: number): number | undefined => {
    const left = partRank[start]!;
    const right = partRank[middle]!;
    if (!pairCache || left < 0 || right < 0) return rankOf(start, end);
    const known = pairCache.get(left, right);
    if (known !== UNKNOWN) return known < 0 ? undefined : known;
    const rank = rankOf(start, end);
    pairCache.set(left, right, rank ?? -1);
    return rank;
  };

  const offer = (start: number) => {
    const middle = next[start]!;
    if (middle >= length) return;
    const end = next[middle]!;
    const rank = pairRank(start, middle, end);
    if (rank !== undefined) heap.push(rank, start, end);
  };

  for (let start = 0; start < length - 1; start++) {
    const rank = pairRank(start, start + 1, start + 2);
    if (rank !== undefined) heap.append(rank, start, start + 2);
  }
  heap.heapify();
  let parts = length;
  let untilPause = MERGES_PER_SLICE;
  while (heap.size > 0) {
    const { rank, start, end } = heap.pop();
    const middle = next[start]!;
    if (!alive[start] || middle >= length || next[middle] !== end) continue; // a pair since changed
    if (--untilPause === 0) {
      untilPause = MERGES_PER_SLICE;
      yield;
    }
    alive[middle] = 0;
    next[start] = end;
    if (end < length) previous[end] = start;
    partRank[start] = rank;
    parts--;
    offer(start);
    if (start > 0) offer(previous[start]!);
  }
  return parts;
}

const UNKNOWN = -2;
/** Slots of a {@link PairRankCache}: 3 MiB of typed arrays. */
const PAIR_SLOT_BITS = 18;
const PAIR_CACHE_SLOTS = 2 ** PAIR_SLOT_BITS;
const PAIR_SLOT_SHIFT = 32 - PAIR_SLOT_BITS;

/**
 * Ranks of merged pairs of tokens (-1: not in the vocabulary), remembered between pieces. A
 * direct-mapped table of typed arrays: a lookup is a multiply and two comparisons (a Map keyed
 * by a packed pair is ten times slower, its keys being doubles), and a collision just replaces
 * the older pair, so memory stays fixed.
 */
export class PairRankCache {
  private readonly lefts = new Int32Array(PAIR_CACHE_SLOTS).fill(-1);
  private readonly rights = new Int32Array(PAIR_CACHE_SLOTS);
  private readonly ranks = new Int32Array(PAIR_CACHE_SLOTS);

  private slot(left: number, right: number): number {
    return (Math.imul(left, 0x9e3779b1) ^ Math.imul(right, 0x85ebca77)) >>> PAIR_SLOT_SHIFT;
  }

  /** The remembered rank of the pair, -1 when it is not a token, or UNKNOWN (-2). */
  get(left: number, right: number): number {
    const slot = this.slot(left, right);
    return this.lefts[slot] === left && this.rights[slot] === right ? this.ranks[slot]! : UNKNOWN;
  }

  set(left: number, right: number, rank: number): void {
    const slot = this.slot(left, right);
    this.lefts[slot] = left;
    this.rights[slot] = right;
    this.ranks[slot] = rank;
  }
}

/** Start offsets stay below 2^32, so (rank, start) packs into one exactly representable double. */
const START_RANGE = 2 ** 32;

/**
 * A 4-ary min-heap of pairs ordered by rank, then start (leftmost lowest first), each packed
 * into one number so that a comparison is one `<`. Four children a node: half the levels of a
 * binary heap, and the four sit side by side in memory; a 1 MiB run keeps about a million
 * entries, far past the CPU's caches, so each level is a cache miss.
 */
function createPairHeap(length: number) {
  // Each merge offers at most two pairs: 3n entries is enough for the whole run.
  const capacity = 3 * length + 3;
  const keys = new Float64Array(capacity);
  const ends = new Int32Array(capacity);
  let size = 0;
  const top = { rank: 0, start: 0, end: 0 };

  function siftDown(from: number): void {
    const key = keys[from]!;
    const end = ends[from]!;
    let at = from;
    for (;;) {
      const first = 4 * at + 1;
      if (first >= size) break;
      let child = first;
      const last = Math.min(first + 4, size);
      for (let other = first + 1; other < last; other++) if (keys[other]! < keys[child]!) child = other;
      if (keys[child]! >= key) break;
      keys[at] = keys[child]!;
      ends[at] = ends[child]!;
      at = child;
    }
    keys[at] = key;
    ends[at] = end;
  }

  return {
    get size() {
      return size;
    },
    /** Adds without ordering; call {@link heapify} once before the first pop. */
    append(rank: number, start: number, end: number) {
      keys[size] = rank * START_RANGE + start;
      ends[size++] = end;
    },
    heapify() {
      for (let at = (size - 2) >> 2; at >= 0; at--) siftDown(at);
    },
    push(rank: number, start: number, end: number) {
      const key = rank * START_RANGE + start;
      let at = size++;
      while (at > 0) {
        const parent = (at - 1) >> 2;
        if (keys[parent]! <= key) break;
        keys[at] = keys[parent]!;
        ends[at] = ends[parent]!;
        at = parent;
      }
      keys[at] = key;
      ends[at] = end;
    },
    /** The top entry; the returned object is reused by the next call. */
    pop() {
      top.start = keys[0]! % START_RANGE;
      top.rank = (keys[0]! - top.start) / START_RANGE;
      top.end = ends[0]!;
      size--;
      if (size > 0) {
        keys[0] = keys[size]!;
        ends[0] = ends[size]!;
        siftDown(0);
      }
      return top;
    },
  };
}
