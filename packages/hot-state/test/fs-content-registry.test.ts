import { readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createBlobStore } from "@stowage/blob-store";
import { TEMP_FILE_PREFIX } from "@stowage/core/fs";
import { createFsObjectStore } from "@stowage/storage-fs";
import { filesUnder, runChild, spawnChild, tempDirectory, withoutJournal } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { createContentRegistry } from "../src/index.js";
import { ContentRecordSchema } from "../src/schemas/schemas.js";
import { captureLogger } from "./capture-logger.js";

const base = await tempDirectory("stowage-hot-state-fs-");
const storeContent = new URL("./children/store-content.ts", import.meta.url);

/** One directory, as an app lays it out: blobs (shared with session images) and the registry's records. */
const open = (root: string) => {
  const logger = captureLogger();
  const store = createFsObjectStore({ root });
  const blobs = createBlobStore({ store, layout: "sharded", prefix: "blobs/" });
  return {
    logger,
    blobs,
    registry: createContentRegistry({ content: blobs, records: store, prefix: "content-refs/", logger }),
  };
};

const blobPath = (root: string, id: string) => join(root, "blobs", id.slice(0, 2), id);
const recordPath = (root: string, id: string) => join(root, "content-refs", id.slice(0, 2), `${id}.json`);

describe("content registry on the file system", () => {
  it("keeps the bytes as a blob and the record beside them, and points content_uri at the blob's file", async () => {
    const root = join(base, "layout");
    const { registry } = open(root);
    const { record } = await registry.storeText("on disk", { summary: "s" });
    const id = record.artifact_id;
    expect(withoutJournal(await filesUnder(root))).toEqual([
      `blobs/${id.slice(0, 2)}/${id}`,
      `content-refs/${id.slice(0, 2)}/${id}.json`,
    ]);
    expect(await readFile(blobPath(root, id), "utf8")).toBe("on disk");
    expect(JSON.parse(await readFile(recordPath(root, id), "utf8"))).toEqual(record);
    expect(record.content_uri).toBe(pathToFileURL(blobPath(root, id)).href);
    expect(record.content_uri.startsWith("file:///")).toBe(true);
  });

  it("rebuilds a record mangled by hand; one deleted by hand removes the entry", async () => {
    const root = join(base, "by-hand");
    const { registry, logger } = open(root);
    const { record } = await registry.storeText("hand edited");
    const path = recordPath(root, record.artifact_id);
    await writeFile(path, "\u0000\u0000 not json");
    expect((await registry.get(record.artifact_id))!.record.size_bytes).toBe(record.size_bytes);
    expect(ContentRecordSchema.parse(JSON.parse(await readFile(path, "utf8"))).artifact_id).toBe(
      record.artifact_id,
    );
    await writeFile(path, "{}");
    expect((await registry.getRecord(record.artifact_id))?.artifact_id).toBe(record.artifact_id);
    expect(JSON.parse(await readFile(path, "utf8")).artifact_id).toBe(record.artifact_id);
    expect(logger.lines).toHaveLength(2);
    await unlink(path);
    expect(await registry.get(record.artifact_id)).toBeNull();
    expect(await readFile(blobPath(root, record.artifact_id), "utf8")).toBe("hand edited");
  });

  it("a process killed while storing leaves only whole entries, each readable and verified", async () => {
    const root = join(base, "killed");
    const child = spawnChild(storeContent, [root, "1000", "384", "killed"]);
    const printed: string[] = [];
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on("data", (chunk: Buffer) => {
        printed.push(...chunk.toString().split("\n").filter(Boolean));
        if (printed.length >= 5) resolve();
      });
      child.on("exit", (code) => reject(new Error(`child exited early with ${code}`)));
    });
    child.kill("SIGKILL");
    await new Promise((resolve) => child.on("close", resolve));

    const { registry, blobs } = open(root);
    const listed = (await registry.list({ limit: 1000 })).items.map((record) => record.artifact_id);
    expect(listed.length).toBeGreaterThanOrEqual(printed.length);
    expect(listed).toEqual(expect.arrayContaining(printed));
    for (const id of listed) {
      const found = await registry.get(id);
      expect(found!.content.byteLength).toBe(found!.record.size_bytes);
      expect(ContentRecordSchema.safeParse(found!.record).success).toBe(true);
    }
    // Whatever was cut short is a temp file, never a visible object; the fs store sweeps it. A
    // blob stored just before the kill may have no record yet: it is not in the registry.
    await createFsObjectStore({ root }).removeStaleTempFiles({ olderThanMs: 0 });
    const files = withoutJournal(await filesUnder(root));
    expect(files.some((path) => path.split("/").at(-1)!.startsWith(TEMP_FILE_PREFIX))).toBe(false);
    const records = files.filter((path) => path.startsWith("content-refs/"));
    const blobFiles = files.filter((path) => path.startsWith("blobs/"));
    expect(records).toHaveLength(listed.length);
    expect(records.length + blobFiles.length).toBe(files.length);
    for (const id of listed) await blobs.verify(id);
  });

  it("two processes storing the same content at once both succeed and leave one sound copy each", async () => {
    const root = join(base, "two-writers");
    const [first, second] = await Promise.all([
      runChild(storeContent, [root, "60", "4", "shared"]),
      runChild(storeContent, [root, "60", "4", "shared"]),
    ]);
    expect(first.stderr).toBe("");
    expect(second.stderr).toBe("");
    expect([first.code, second.code]).toEqual([0, 0]);
    expect(first.stdout).toBe(second.stdout);
    const { registry, logger } = open(root);
    const ids = first.stdout.trim().split("\n");
    expect(new Set(ids).size).toBe(60);
    for (const id of ids) {
      const found = await registry.get(id);
      expect(found!.record).toMatchObject({ artifact_id: id, type: "log", producer: "executor" });
    }
    expect(logger.lines).toEqual([]);
    expect(withoutJournal(await filesUnder(root)).length).toBe(120);
  });
});
