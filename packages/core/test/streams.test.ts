import { describe, expect, it } from "vitest";
import { StowageError } from "../src/errors.js";
import { bytesToStream, concatBytes, readStreamToBytes } from "../src/streams.js";

describe("streams", () => {
  it("serves bytes as a stream in bounded chunks and reads them back", async () => {
    const bytes = Uint8Array.from({ length: 200_000 }, (_, i) => i % 251);
    const sizes: number[] = [];
    const reader = bytesToStream(bytes, 65_536).getReader();
    for (let r = await reader.read(); !r.done; r = await reader.read()) sizes.push(r.value.byteLength);
    expect(sizes).toEqual([65_536, 65_536, 65_536, 3392]);
    expect(await readStreamToBytes(bytesToStream(bytes))).toEqual(bytes);
  });

  it("stops at maxBytes with TOO_LARGE and cancels the source", async () => {
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      pull: (controller) => controller.enqueue(new Uint8Array(1024)),
      cancel: () => {
        cancelled = true;
      },
    });
    const err = await readStreamToBytes(endless, { maxBytes: 10_000 }).catch((e: unknown) => e);
    expect(StowageError.is(err, "TOO_LARGE")).toBe(true);
    expect(cancelled).toBe(true);
  });

  it("fails with ABORTED when the signal fires mid-read", async () => {
    const controller = new AbortController();
    let pulls = 0;
    const slow = new ReadableStream<Uint8Array>({
      async pull(stream) {
        if (++pulls === 3) controller.abort();
        await new Promise((resolve) => setTimeout(resolve, 5));
        stream.enqueue(new Uint8Array(10));
      },
    });
    const err = await readStreamToBytes(slow, { signal: controller.signal }).catch((e: unknown) => e);
    expect(StowageError.is(err, "ABORTED")).toBe(true);
  });

  it("rejects chunks that are not bytes", async () => {
    const strings = new ReadableStream({ start: (c) => c.enqueue("text" as unknown as Uint8Array) });
    const err = await readStreamToBytes(strings).catch((e: unknown) => e);
    expect(StowageError.is(err, "INVALID_INPUT")).toBe(true);
  });

  it("concatenates chunks", () => {
    expect(concatBytes([Uint8Array.of(1, 2), Uint8Array.of(), Uint8Array.of(3)])).toEqual(
      Uint8Array.of(1, 2, 3),
    );
  });
});
