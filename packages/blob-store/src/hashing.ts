import { createHash } from "node:crypto";

/** SHA-256 (64 lowercase hex) and length of the bytes that went through a stream. */
export interface StreamDigest {
  hash: string;
  size: number;
}

/**
 * A pass-through stream that hashes and counts what flows through it. With `check`, the stream
 * errors at its end with the error `check` returns for the digest (a verified read that must
 * not end as if it were good).
 */
export function hashingTransform(check?: (digest: StreamDigest) => Error | undefined): {
  transform: TransformStream<Uint8Array, Uint8Array>;
  /** The digest; call it once the stream has ended. */
  result: () => StreamDigest;
} {
  const hash = createHash("sha256");
  let size = 0;
  let digest: StreamDigest | undefined;
  const result = () => {
    digest ??= { hash: hash.digest("hex"), size };
    return digest;
  };
  const transform = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      hash.update(chunk);
      size += chunk.byteLength;
      controller.enqueue(chunk);
    },
    flush(controller) {
      const problem = check?.(result());
      if (problem) controller.error(problem);
    },
  });
  return { transform, result };
}
