import { createHash } from "node:crypto";

export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** A pass-through stream that hashes and counts what flows through it. */
export function hashingTransform(): {
  transform: TransformStream<Uint8Array, Uint8Array>;
  result: () => { hash: string; size: number };
} {
  const hash = createHash("sha256");
  let size = 0;
  const transform = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      hash.update(chunk);
      size += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
  return { transform, result: () => ({ hash: hash.digest("hex"), size }) };
}
