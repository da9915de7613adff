import { BLOB_REF_PREFIX, StowageError } from "@stowage/core";

/**
 * How deep the search for binary goes into a serialized value (objects and arrays); deeper parts
 * stay as they are. The same bound as the blob store's entry walker.
 */
const MAX_DEPTH = 512;

/** A Uint8Array of a serialized value moved to the blob store: where it was and which blob. */
export interface MovedBinary {
  path: (string | number)[];
  sha256: string;
  /** The record's `method` as LangGraph's serializer wrote it (`from`, or null). */
  method: string | null;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isRecord = (value: unknown): value is Record<string, Json> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The bytes of a Uint8Array as LangGraph's `JsonPlusSerializer` writes one nested in a value
 * (`{ lc: 2, type: "constructor", id: ["Uint8Array"], method, args: [[...bytes]] }`), or undefined
 * when `value` is not exactly such a record (then it is left alone, and read back as it was).
 */
function bytesOf(value: Record<string, Json>): { bytes: Uint8Array; method: string | null } | undefined {
  if (value.lc !== 2 || value.type !== "constructor") return undefined;
  const { id, args, method, kwargs } = value;
  if (!Array.isArray(id) || id.length !== 1 || id[0] !== "Uint8Array") return undefined;
  if (method !== null && method !== "from") return undefined;
  if (kwargs !== undefined && !(isRecord(kwargs) && Object.keys(kwargs).length === 0)) return undefined;
  const keys = Object.keys(value);
  if (keys.some((key) => !["lc", "type", "id", "method", "args", "kwargs"].includes(key))) return undefined;
  if (!Array.isArray(args) || args.length !== 1 || !Array.isArray(args[0])) return undefined;
  const numbers = args[0];
  const bytes = new Uint8Array(numbers.length);
  for (let i = 0; i < numbers.length; i++) {
    const byte = numbers[i];
    if (typeof byte !== "number" || !Number.isInteger(byte) || byte < 0 || byte > 255) return undefined;
    bytes[i] = byte;
  }
  return { bytes, method };
}

/**
 * Replaces, in place, every serialized Uint8Array of at least `threshold` bytes in `root` (a value
 * freshly parsed, owned by the caller) with its `blob:sha256:` ref, and returns the bytes to store
 * with where each was. `hash` gives a blob's SHA-256.
 */
export function takeBinaries(
  root: unknown,
  threshold: number,
  hash: (bytes: Uint8Array) => string,
): { moved: MovedBinary[]; blobs: Map<string, Uint8Array> } {
  const moved: MovedBinary[] = [];
  const blobs = new Map<string, Uint8Array>();
  const path: (string | number)[] = [];
  const visit = (value: unknown, depth: number): string | undefined => {
    if (typeof value !== "object" || value === null || depth >= MAX_DEPTH) return undefined;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        path.push(i);
        const ref = visit(value[i], depth + 1);
        if (ref !== undefined) value[i] = ref;
        path.pop();
      }
      return undefined;
    }
    const record = value as Record<string, Json>;
    // A record found at the root is the whole value: the serializer gives those as "bytes".
    const binary = depth > 0 ? bytesOf(record) : undefined;
    if (binary && binary.bytes.byteLength >= threshold) {
      const sha256 = hash(binary.bytes);
      blobs.set(sha256, binary.bytes);
      moved.push({ path: [...path], sha256, method: binary.method });
      return BLOB_REF_PREFIX + sha256;
    }
    for (const key of Object.keys(record)) {
      path.push(key);
      const ref = visit(record[key], depth + 1);
      if (ref !== undefined) record[key] = ref;
      path.pop();
    }
    return undefined;
  };
  visit(root, 0);
  return { moved, blobs };
}

/**
 * Puts every moved Uint8Array back into `root` (freshly parsed, owned by the caller), as the
 * serializer wrote it. `bytesOf` gives a blob's bytes. A recorded place that does not hold its ref
 * is INTEGRITY / PAYLOAD_REF_MISMATCH.
 */
export function putBackBinaries(
  root: unknown,
  moved: readonly MovedBinary[],
  blobBytes: (sha256: string) => Uint8Array,
): void {
  for (const { path, sha256, method } of moved) {
    const ref = BLOB_REF_PREFIX + sha256;
    let parent: unknown = root;
    for (const step of path.slice(0, -1)) {
      parent =
        isContainer(parent) && Object.hasOwn(parent, step)
          ? (parent as Record<string, unknown>)[step]
          : undefined;
    }
    const last = path[path.length - 1]!;
    if (
      !isContainer(parent) ||
      !Object.hasOwn(parent, last) ||
      (parent as Record<string, unknown>)[last] !== ref
    ) {
      throw new StowageError(
        "INTEGRITY",
        `the binary recorded as moved to ${ref} is not where it was recorded (the value was changed outside its store)`,
        { reason: "PAYLOAD_REF_MISMATCH", details: { ref } },
      );
    }
    (parent as Record<string | number, unknown>)[last] = {
      lc: 2,
      type: "constructor",
      id: ["Uint8Array"],
      method,
      args: [Array.from(blobBytes(sha256))],
      kwargs: {},
    };
  }
}

const isContainer = (value: unknown): value is object => typeof value === "object" && value !== null;
