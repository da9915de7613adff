import { expectStowageError } from "@stowage/core/testing";
import { describe, expect, it } from "vitest";
import { uploadPartsConcurrently } from "../src/concurrent-parts.js";
import { createPartReader } from "../src/stream-parts.js";

const PART = 4;

/** A stream of `count` parts of PART bytes, part i filled with i; `failAt` errors the stream there. */
function partsOf(count: number, failAt?: number) {
  let index = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (index === failAt) return controller.error(new Error("disk read failed"));
      if (index === count) return controller.close();
      controller.enqueue(new Uint8Array(PART).fill(index++));
    },
  });
  return createPartReader(stream, PART, undefined, "test");
}

/** A fake UploadPart whose requests the test settles by hand, recording what was in flight. */
function fakeServer() {
  const pending = new Map<number, { resolve: (etag: string) => void; reject: (err: unknown) => void }>();
  const started: number[] = [];
  const aborted: number[] = [];
  let maxInFlight = 0;
  let settled = 0;
  return {
    started,
    aborted,
    get maxInFlight() {
      return maxInFlight;
    },
    get settled() {
      return settled;
    },
    uploadPart(partNumber: number, body: Uint8Array, signal: AbortSignal): Promise<string> {
      expect(body[0]).toBe(partNumber - 1); // the part's own bytes, in order
      started.push(partNumber);
      return new Promise<string>((resolve, reject) => {
        pending.set(partNumber, { resolve, reject });
        maxInFlight = Math.max(maxInFlight, pending.size);
        signal.addEventListener("abort", () => {
          if (!pending.has(partNumber)) return;
          aborted.push(partNumber);
          reject(signal.reason);
        });
      }).finally(() => {
        pending.delete(partNumber);
        settled++;
      });
    },
    /** Lets the event loop run until `count` requests are waiting. */
    async waitFor(count: number) {
      for (let i = 0; i < 1000 && pending.size < count; i++) await new Promise((r) => setImmediate(r));
      expect(pending.size).toBe(count);
    },
    succeed(partNumber: number) {
      pending.get(partNumber)!.resolve(`"etag-${partNumber}"`);
    },
    fail(partNumber: number, err: unknown) {
      pending.get(partNumber)!.reject(err);
    },
  };
}

async function startUpload(
  count: number,
  inFlight: number,
  server: ReturnType<typeof fakeServer>,
  failAt?: number,
) {
  const parts = partsOf(count, failAt);
  const first = (await parts.next())!;
  const done = uploadPartsConcurrently({
    first,
    parts,
    inFlight,
    maxParts: 10,
    limitBytes: 10 * PART,
    context: "test put",
    uploadPart: (n, body, signal) => server.uploadPart(n, body, signal),
  });
  done.catch(() => {});
  return done;
}

describe("uploadPartsConcurrently", () => {
  it("keeps at most inFlight parts uploading and returns every part in order", async () => {
    const server = fakeServer();
    const done = startUpload(7, 3, server);
    await server.waitFor(3);
    // Finish out of order: a later part first.
    server.succeed(2);
    await server.waitFor(3);
    for (const n of [1, 3, 4, 5, 6, 7]) {
      for (let i = 0; i < 100 && !server.started.includes(n); i++) await new Promise((r) => setImmediate(r));
      server.succeed(n);
    }
    expect(await done).toEqual({
      parts: [1, 2, 3, 4, 5, 6, 7].map((n) => ({ PartNumber: n, ETag: `"etag-${n}"` })),
      size: 7 * PART,
    });
    expect(server.maxInFlight).toBe(3);
  });

  it("after a failed part, starts no other, aborts the running ones and throws once all settled", async () => {
    const server = fakeServer();
    const done = startUpload(8, 4, server);
    await server.waitFor(4);
    const failure = new Error("part 2 refused");
    server.fail(2, failure);
    await expect(done).rejects.toBe(failure);
    expect(server.settled).toBe(server.started.length); // nothing still running when it threw
    expect(server.started).toEqual([1, 2, 3, 4]);
    expect(server.aborted.sort()).toEqual([1, 3, 4]);
  });

  it("a stream that fails mid-way aborts the running parts and throws its error", async () => {
    const server = fakeServer();
    // The reader looks one chunk ahead, so the third part's read meets the error at chunk 3.
    const done = startUpload(8, 4, server, 3);
    await expect(done).rejects.toThrow("disk read failed");
    expect(server.started).toEqual([1, 2]);
    expect(server.settled).toBe(2);
    expect(server.aborted.sort()).toEqual([1, 2]);
  });

  it("refuses a stream of more than maxParts parts with TOO_LARGE, after the running parts settle", async () => {
    const server = fakeServer();
    const done = startUpload(12, 20, server);
    await expectStowageError(done, "TOO_LARGE");
    expect(server.started).toHaveLength(10);
    expect(server.settled).toBe(10);
  });
});
