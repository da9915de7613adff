import { expectStowageError } from "@stowage/core/testing";
import { createFsObjectStore } from "@stowage/storage-fs";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { createUploadService, type SweepUploadsProgress } from "../src/index.js";

// The sweep's onProgress, for a progress bar: keys listed so far, uploads swept so far. Keys follow
// the design document's layout, `sessions/<user|org>/<id>/<sessionId>/artifacts/<file>`.
const DAY_MS = 24 * 60 * 60 * 1000;
const bytes = (text: string) => new TextEncoder().encode(text);

async function serviceWith(files: Record<string, string>) {
  // The service needs a store that signs URLs; nothing is uploaded through them here.
  const store = createFsObjectStore({
    root: await tempDirectory("stowage-sweep-progress-"),
    directUrls: { baseUrl: "http://127.0.0.1:9/direct", secret: "a test secret of at least 32 bytes!" },
  });
  for (const [key, text] of Object.entries(files)) await store.put(key, bytes(text));
  return createUploadService({ store, sessionExists: async () => true });
}

describe("sweepUploads' onProgress", () => {
  it.each([false, true])("counts every key listed and every upload swept (dry run: %s)", async (dryRun) => {
    const uploads = await serviceWith({
      "sessions/user/alice/s1/artifacts/a.png": "a",
      "sessions/user/alice/s1/artifacts/b.log": "bb",
      "sessions/user/bob/s2/artifacts/c.txt": "ccc",
    });
    const seen: SweepUploadsProgress[] = [];
    const swept = await uploads.sweepUploads({
      olderThanDays: 30,
      dryRun,
      now: new Date(Date.now() + 40 * DAY_MS),
      onProgress: (progress) => seen.push(progress),
    });
    expect(swept.uploads).toHaveLength(3);
    // Monotone, ending at what the result says.
    for (const [i, progress] of seen.entries()) {
      if (i === 0) continue;
      expect(progress.scanned).toBeGreaterThanOrEqual(seen[i - 1]!.scanned);
      expect(progress.swept).toBeGreaterThanOrEqual(seen[i - 1]!.swept);
    }
    expect(seen.at(-1)).toEqual({ scanned: 3, swept: 3 });
    // Each session's uploads are swept when the listing has passed it: alice's two before bob's.
    expect(seen.map((p) => p.swept)).toContain(2);
  });

  it("nothing old: keys are counted, nothing swept", async () => {
    const uploads = await serviceWith({ "sessions/user/alice/s1/artifacts/a.png": "a" });
    const seen: SweepUploadsProgress[] = [];
    await uploads.sweepUploads({ olderThanDays: 30, onProgress: (p) => seen.push(p) });
    expect(seen.at(-1)).toEqual({ scanned: 1, swept: 0 });
  });

  it.each([1, "yes", {}, null])("refuses onProgress %j that is not a function", async (onProgress) => {
    const uploads = await serviceWith({});
    await expectStowageError(
      uploads.sweepUploads({ olderThanDays: 30, onProgress: onProgress as never }),
      "INVALID_INPUT",
    );
  });
});
