import { readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createFsObjectStore, TEMP_FILE_PREFIX } from "@stowage/storage-fs";
import { filesUnder, runChild, spawnChild, tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { ArtifactRecordSchema, createArtifactRegistry } from "../src/index.js";
import { captureLogger } from "./capture-logger.js";

const base = await tempDirectory("stowage-hot-state-fs-");
const storeArtifacts = new URL("./children/store-artifacts.ts", import.meta.url);

const open = (root: string) => {
  const logger = captureLogger();
  return { logger, registry: createArtifactRegistry({ store: createFsObjectStore({ root }), logger }) };
};

describe("artifact registry on the file system", () => {
  it("lays artifacts out as <root>/<aa>/<sha256>/{content,record.json}", async () => {
    const root = join(base, "layout");
    const { registry } = open(root);
    const { record } = await registry.storeText("on disk", { summary: "s" });
    const id = record.artifact_id;
    expect(await filesUnder(root)).toEqual([
      `${id.slice(0, 2)}/${id}/content`,
      `${id.slice(0, 2)}/${id}/record.json`,
    ]);
    expect(await readFile(join(root, id.slice(0, 2), id, "content"), "utf8")).toBe("on disk");
    const onDisk = JSON.parse(await readFile(join(root, id.slice(0, 2), id, "record.json"), "utf8"));
    expect(onDisk).toEqual(record);
    expect(record.content_uri).toBe(`file://${join(root, id.slice(0, 2), id, "content")}`);
  });

  it("rebuilds a record.json deleted or mangled by hand", async () => {
    const root = join(base, "by-hand");
    const { registry, logger } = open(root);
    const { record } = await registry.storeText("hand edited");
    const recordPath = join(root, record.artifact_id.slice(0, 2), record.artifact_id, "record.json");
    await unlink(recordPath);
    expect((await registry.get(record.artifact_id))!.record.size_bytes).toBe(record.size_bytes);
    expect(ArtifactRecordSchema.parse(JSON.parse(await readFile(recordPath, "utf8"))).artifact_id).toBe(
      record.artifact_id,
    );
    await writeFile(recordPath, "\u0000\u0000 not json");
    expect((await registry.rebuildRecord(record.artifact_id)).artifact_id).toBe(record.artifact_id);
    expect(logger.lines).toHaveLength(2);
  });

  it("a process killed while storing leaves only whole artifacts, each readable and verified", async () => {
    const root = join(base, "killed");
    const child = spawnChild(storeArtifacts, [root, "1000", "384", "killed"]);
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

    const { registry } = open(root);
    const listed = (await registry.list({ limit: 1000 })).items.map((record) => record.artifact_id);
    expect(listed.length).toBeGreaterThanOrEqual(printed.length);
    expect(listed).toEqual(expect.arrayContaining(printed));
    for (const id of listed) {
      const found = await registry.get(id);
      expect(found!.content.byteLength).toBe(found!.record.size_bytes);
      expect(ArtifactRecordSchema.safeParse(found!.record).success).toBe(true);
    }
    // Whatever was cut short is a temp file, never a visible object; the fs store sweeps it.
    const visible = (await filesUnder(root)).filter(
      (path) => !path.split("/").at(-1)!.startsWith(TEMP_FILE_PREFIX),
    );
    expect(visible.every((path) => /\/(content|record\.json)$/.test(path))).toBe(true);
    await createFsObjectStore({ root }).removeStaleTempFiles({ olderThanMs: 0 });
    expect((await filesUnder(root)).length).toBe(listed.length * 2);
  });

  it("two processes storing the same artifacts at once both succeed and leave one sound copy each", async () => {
    const root = join(base, "two-writers");
    const [first, second] = await Promise.all([
      runChild(storeArtifacts, [root, "60", "4", "shared"]),
      runChild(storeArtifacts, [root, "60", "4", "shared"]),
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
    expect((await filesUnder(root)).length).toBe(120);
  });
});
