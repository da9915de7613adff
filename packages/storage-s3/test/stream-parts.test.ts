import { StowageError } from "@stowage/core";
import { describe, expect, it } from "vitest";
import { createPartReader } from "../src/stream-parts.js";

function streamOf(chunks: number[], fill = (i: number) => i % 251): ReadableStream<Uint8Array> {
  let offset = 0;
  let index = 0;
  return new ReadableStream({
    pull(controller) {
      if (index === chunks.length) return controller.close();
      const size = chunks[index++]!;
      controller.enqueue(Uint8Array.from({ length: size }, (_, i) => fill(offset + i)));
      offset += size;
    },
  });
}

async function parts(
  stream: ReadableStream<Uint8Array>,
  partSize: number,
): Promise<{ sizes: number[]; bytes: number[] }> {
  const reader = createPartReader(stream, partSize, undefined, "test");
  const sizes: number[] = [];
  const bytes: number[] = [];
  for (let part = await reader.next(); part; part = await reader.next()) {
    sizes.push(part.byteLength);
    bytes.push(...part);
  }
  expect(reader.finished).toBe(true);
  return { sizes, bytes };
}

describe("part reader", () => {
  it.each([
    [[], 10, []],
    [[0, 0], 10, []],
    [[3], 10, [3]],
    [[10], 10, [10]],
    [[1, 2, 3, 4], 10, [10]],
    [[25], 10, [10, 10, 5]],
    [[7, 7, 7, 7], 10, [10, 10, 8]],
    [[30], 10, [10, 10, 10]],
  ])("chunks %j in parts of %d → %j", async (chunks, partSize, expected) => {
    const total = chunks.reduce((sum, size) => sum + size, 0);
    const { sizes, bytes } = await parts(streamOf(chunks), partSize);
    expect(sizes).toEqual(expected);
    expect(bytes).toEqual(Array.from({ length: total }, (_, i) => i % 251));
  });

  it("knows a stream of exactly one part is finished after the first part", async () => {
    const reader = createPartReader(streamOf([4, 6]), 10, undefined, "test");
    expect((await reader.next())?.byteLength).toBe(10);
    expect(reader.finished).toBe(true);
  });

  it("hands the rest on as a stream, with what was read before, and caps it", async () => {
    const reader = createPartReader(streamOf([6, 6, 6]), 10, undefined, "test");
    const first = (await reader.next())!;
    expect(reader.finished).toBe(false);
    const rest: number[] = [];
    for await (const chunk of reader.remaining(first, 100) as unknown as AsyncIterable<Uint8Array>)
      rest.push(...chunk);
    expect(rest).toEqual(Array.from({ length: 18 }, (_, i) => i));

    const capped = createPartReader(streamOf([6, 6, 6]), 10, undefined, "test");
    const head = (await capped.next())!;
    const read = async () => {
      for await (const _ of capped.remaining(head, 12) as unknown as AsyncIterable<Uint8Array>);
    };
    await expect(read()).rejects.toMatchObject({ code: "TOO_LARGE" });
  });

  it("copies parts, so a producer may reuse its buffer", async () => {
    const shared = new Uint8Array(4).fill(1);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ === 3) return controller.close();
        controller.enqueue(shared);
      },
    });
    const reader = createPartReader(stream, 8, undefined, "test");
    const part = (await reader.next())!;
    shared.fill(9);
    expect([...part]).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
  });

  it("fails with ABORTED when the signal fires, and on chunks that are not bytes", async () => {
    const controller = new AbortController();
    controller.abort();
    const aborted = createPartReader(streamOf([5]), 10, controller.signal, "test");
    await expect(aborted.next()).rejects.toMatchObject({ code: "ABORTED" });
    const strings = new ReadableStream<unknown>({
      start: (c) => c.enqueue("text"),
    }) as ReadableStream<Uint8Array>;
    const err = await createPartReader(strings, 10, undefined, "test")
      .next()
      .catch((e: unknown) => e);
    expect(StowageError.is(err, "INVALID_INPUT")).toBe(true);
  });
});
