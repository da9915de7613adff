import { randomBytes, randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Principal } from "@stowage/core";
import { sha256Hex } from "@stowage/core";
import { tempDirectory } from "@stowage/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uploadFile, uploadFiles } from "../src/agent/index.js";
import { createUploadPolicy, createUploadService } from "../src/index.js";
import { uploadDownloadPath, uploadListPath } from "../src/protocol.js";
import { emptyStore, rgwSkipReason, rgwStore } from "./support/rgw.js";
import { createTestKeys, mountUploadApi } from "./support/test-keys.js";
import { startFetchServer } from "./support/upload-server.js";

const store = rgwStore("agent-upload");
const alice: Principal = { kind: "user", id: "alice" };
const bob: Principal = { kind: "user", id: "bob" };
const apiKeys = createTestKeys();
const sessionId = `s-${randomUUID()}`;

const uploads = createUploadService({
  store,
  // The server's own limit is below the agent's default one: the server decides.
  policy: createUploadPolicy({ maxFileSizeBytes: 1024 * 1024 }),
  sessionExists: (principal, id) => principal.kind === "user" && principal.id === "alice" && id === sessionId,
});
// The package's handler, mounted as an app mounts it (after its own authentication).
const api = await startFetchServer(mountUploadApi(uploads, apiKeys));
const dir = await tempDirectory("stowage-agent-");

describe.skipIf(rgwSkipReason !== undefined)("agent uploads through a real API server to Ceph RGW", () => {
  let aliceKey: string;
  let bobKey: string;

  beforeAll(async () => {
    aliceKey = (await apiKeys.issue(alice)).apiKey;
    bobKey = (await apiKeys.issue(bob)).apiKey;
  });

  afterAll(() => emptyStore(store));

  const file = async (name: string, bytes: Uint8Array) => {
    const path = join(dir, name);
    await writeFile(path, bytes);
    return path;
  };

  it("uploads a file: its bytes, its type and its checksum land in the session", async () => {
    const bytes = new Uint8Array(randomBytes(200 * 1024));
    const filePath = await file("screen.png", bytes);
    const result = await uploadFile({ apiBase: api.url, apiKey: aliceKey, sessionId, filePath });
    const sha256 = sha256Hex(bytes);
    expect(result).toEqual({
      success: true,
      filename: "screen.png",
      // `artifacts/` is the design document's key layout.
      key: `sessions/user/alice/${sessionId}/artifacts/screen.png`,
      size: bytes.byteLength,
      sha256,
      // One try: the URL request, the PUT and the completion (verified on RGW by hashing the object).
      attempts: 1,
      requests: 3,
    });
    expect(Buffer.from((await store.get(result.key!))!).equals(bytes)).toBe(true);
    expect((await store.head(result.key!))?.contentType).toBe("image/png");
  });

  it("uploads several files, overwriting by name, and lists them through the API", async () => {
    await mkdir(join(dir, "logs"), { recursive: true });
    const paths = [
      await file("logs/run.log", new TextEncoder().encode("first run\n")),
      await file("data.json", new TextEncoder().encode('{"ok":true}')),
      await file("tool.exe", new Uint8Array(4)),
      join(dir, "missing.txt"),
    ];
    const results = await uploadFiles(
      paths.map((filePath) => ({ apiBase: api.url, apiKey: aliceKey, sessionId, filePath })),
    );
    expect(results.map((result) => [result.filename, result.success])).toEqual([
      ["run.log", true],
      ["data.json", true],
      ["tool.exe", false],
      ["missing.txt", false],
    ]);
    expect(results[2]).toMatchObject({ code: "INVALID_INPUT", reason: "FILE_TYPE_NOT_ALLOWED" });
    expect(results[3]).toMatchObject({ code: "NOT_FOUND" });
    // The refused files never reached the API.
    expect(results[2]!.attempts).toBe(0);

    await writeFile(paths[0]!, "second run, longer\n");
    expect(
      (await uploadFile({ apiBase: api.url, apiKey: aliceKey, sessionId, filePath: paths[0]! })).success,
    ).toBe(true);

    const response = await fetch(new URL(uploadListPath(sessionId), api.url), {
      headers: { authorization: `Bearer ${aliceKey}` },
    });
    const listed = (await response.json()) as { artifacts: { filename: string; size: number }[] };
    expect(listed.artifacts.map(({ filename, size }) => [filename, size])).toEqual([
      ["data.json", 11],
      ["run.log", 19],
      ["screen.png", 200 * 1024],
    ]);
    const download = await fetch(new URL(uploadDownloadPath(sessionId, "run.log"), api.url), {
      headers: { authorization: `Bearer ${aliceKey}` },
    });
    const { url } = (await download.json()) as { url: string };
    expect(await (await fetch(url)).text()).toBe("second run, longer\n");
  });

  it("reports the server's refusals without throwing: too large, bad key, someone else's session", async () => {
    const big = await file("big.mp4", new Uint8Array(1024 * 1024 + 1));
    const small = await file("small.txt", new TextEncoder().encode("x"));
    const tooLarge = await uploadFile({ apiBase: api.url, apiKey: aliceKey, sessionId, filePath: big });
    expect(tooLarge).toMatchObject({
      success: false,
      filename: "big.mp4",
      code: "TOO_LARGE",
      reason: "FILE_TOO_LARGE",
      attempts: 1,
    });
    const badKey = await uploadFile({
      apiBase: api.url,
      apiKey: `${aliceKey}x`,
      sessionId,
      filePath: small,
    });
    expect(badKey).toMatchObject({ success: false, code: "UNAUTHORIZED", attempts: 1 });
    const notOwner = await uploadFile({ apiBase: api.url, apiKey: bobKey, sessionId, filePath: small });
    expect(notOwner).toMatchObject({ success: false, code: "NOT_FOUND", reason: "SESSION_NOT_FOUND" });
    expect(await store.head(`sessions/user/alice/${sessionId}/artifacts/big.mp4`)).toBeNull();
    expect(await store.head(`sessions/user/alice/${sessionId}/artifacts/small.txt`)).toBeNull();
  });
});
