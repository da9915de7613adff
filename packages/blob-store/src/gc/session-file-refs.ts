import { scanFilesForBlobRefs } from "./file-refs.js";

/** File names scanned when a directory is given: session JSONL, plain or gzipped. */
const SESSION_FILE_PATTERN = /\.jsonl(\.gz)?$/;

/**
 * Yields the hash of every `blob:sha256:` ref in session files: each path is a file (scanned
 * whatever its name) or a directory (searched recursively for `*.jsonl` and `*.jsonl.gz`). A path
 * that does not exist fails with NOT_FOUND: garbage collection must never run on a partial root
 * set. To scan artifacts, agent outputs and thread logs too, use `scanFilesForBlobRefs`.
 */
export function scanSessionFilesForBlobRefs(
  paths: string | readonly string[],
  options: { signal?: AbortSignal } = {},
): AsyncGenerator<string> {
  return scanFilesForBlobRefs(paths, { ...options, include: (name) => SESSION_FILE_PATTERN.test(name) });
}
