import { randomBytes, randomUUID } from "node:crypto";
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { createMemoryNotifier } from "@stowage/core";
import { createFsObjectStore } from "@stowage/storage-fs";
import { runChild, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { createStowage, DEFAULT_STORES } from "../../src/index.js";

const base = await tempDirectory("stowage-encrypted-processes-");
const child = new URL("./children/seal-thread-items.ts", import.meta.url);

describe("two processes sealing a principal's first items at once", () => {
  it("each item is readable by a third process, whichever data key sealed it", async () => {
    const root = join(base, randomUUID());
    const env = { ...process.env, STOWAGE_ENCRYPTION_KEY: randomBytes(32).toString("base64") };
    const principalId = `p-${randomUUID().slice(0, 8)}`;
    const jobId = randomUUID();
    const runs = await Promise.all(
      ["one", "two"].map((label) => runChild(child, [root, principalId, jobId, label, "20"], { env })),
    );
    for (const run of runs) expect(run.code, run.stderr).toBe(0);

    const third = createStowage({
      shared: createFsObjectStore({ root }),
      notifier: createMemoryNotifier(),
      agentSessionsDir: root,
      stores: { threads: DEFAULT_STORES.threads },
      encryption: { env },
    }).tenant({ kind: "user", id: principalId });
    for (const label of ["one", "two"]) {
      const page = await third.threads.items({ jobId, alias: label }, { limit: 100 });
      expect(page.items).toHaveLength(20);
      const posted = JSON.stringify(page.items);
      for (let i = 0; i < 20; i++) expect(posted).toContain(`"${label} ${i}"`);
    }
    // Both may have made a data key (neither overwrote the other's), never more.
    const records = await readdir(join(root, "encryption-keys", "user", principalId));
    expect(records.length).toBeGreaterThanOrEqual(1);
    expect(records.length).toBeLessThanOrEqual(2);
  });
});
