// Encryption at rest through the app: the server and the CLI on one data directory with
// STOWAGE_ENCRYPTION_KEY, the files on disk holding no plaintext, and `stowage keys
// rotate-encryption` letting the old key go.
import { randomBytes, randomUUID } from "node:crypto";
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expectStowageError } from "@stowage/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stowage as run } from "./support/cli.js";
import { startTestApp } from "./support/test-app.js";

const OLD = randomBytes(32).toString("base64");
const NEW = randomBytes(32).toString("base64");
const SECRET = `known-secret-${randomUUID()}`;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "stowage-encryption-cli-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function filesUnder(root: string): Promise<Map<string, Buffer>> {
  const found = new Map<string, Buffer>();
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (entry.isFile())
      found.set(join(entry.parentPath, entry.name), await readFile(join(entry.parentPath, entry.name)));
  }
  return found;
}

describe("an encrypted data directory", () => {
  it("the server stores what it is sent sealed; the CLI reads it, rotates the key, and the old key is refused", async () => {
    const app = await startTestApp({ STOWAGE_ENCRYPTION_KEY: OLD });
    const dataDir = join(dir, ".stowage");
    let hash: string;
    try {
      const key = await app.keyFor({ kind: "user", id: "alice" });
      const put = await app.call("/blobs", { key, body: `a .env the agent read: ${SECRET}` });
      expect(put.status).toBe(201);
      hash = ((await put.json()) as { hash: string }).hash;
      const got = await app.call(`/blobs/${hash}`, { key });
      expect(await got.text()).toContain(SECRET);
      // The CLI works on what the server stored (the test app's directory goes with it).
      await cp(join(app.dataDir, "objects"), join(dataDir, "objects"), { recursive: true });
    } finally {
      await app.close();
    }
    const objects = await filesUnder(join(dataDir, "objects"));
    expect(objects.size).toBeGreaterThan(1);
    for (const [path, bytes] of objects) expect(bytes.includes(SECRET), path).toBe(false);

    const env = (keys: string | undefined) => ({
      STOWAGE_DATA_DIR: dataDir,
      ...(keys === undefined ? {} : { STOWAGE_ENCRYPTION_KEY: keys }),
    });
    const cli = async (keys: string | undefined, ...argv: string[]) =>
      (await run(argv, { cwd: dir, env: env(keys) })).stdout;
    await writeFile(join(dir, "out-old"), "");
    await cli(OLD, "blob", "get", hash, "--out", "out-old");
    expect(await readFile(join(dir, "out-old"), "utf8")).toContain(SECRET);

    const report = JSON.parse(await cli(`${NEW},${OLD}`, "keys", "rotate-encryption", "--json"));
    // One data key: the deployment's (blobs, their owner marks, API keys); alice stored nothing in her namespace.
    expect(report).toMatchObject({ rewrapped: 1, alreadyCurrent: 0 });
    const unchanged = await filesUnder(join(dataDir, "objects"));
    for (const [path, bytes] of objects) {
      if (!path.includes("encryption-keys")) expect(unchanged.get(path)?.equals(bytes), path).toBe(true);
    }

    await cli(NEW, "blob", "get", hash, "--out", "out-new");
    expect(await readFile(join(dir, "out-new"), "utf8")).toContain(SECRET);
    await expectStowageError(cli(OLD, "blob", "get", hash, "--out", "out-refused"), "FORBIDDEN");
    await expectStowageError(cli(undefined, "keys", "rotate-encryption"), "INVALID_INPUT");
  });
});
