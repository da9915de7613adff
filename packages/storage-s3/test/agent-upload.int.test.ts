import { createHash, randomBytes, randomUUID } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uploadArtifact, uploadArtifacts } from "../src/agent.js";
import { createApiKeys } from "../src/api-keys.js";
import type { Principal } from "../src/artifact-keys.js";
import { createArtifactPolicy } from "../src/artifact-policy.js";
import { createArtifactUploads } from "../src/artifact-uploads.js";
import { startArtifactServer } from "./support/artifact-server.js";
import { bucket, emptyPrefix, s3SkipReason, testClient, uniquePrefix } from "./support/s3-env.js";

const client = testClient();
const prefix = uniquePrefix("agent-upload");
const alice: Principal = { kind: "user", id: "alice" };
const bob: Principal = { kind: "user", id: "bob" };

describe.skipIf(s3SkipReason !== undefined)("agent uploads through a real API server to Ceph RGW", () => {
  const apiKeys = createApiKeys();
  const sessionId = `s-${randomUUID()}`;
  const owners = new Map([[sessionId, alice]]);
  const uploads = createArtifactUploads({
    client,
    bucket,
    prefix,
    // The server's own limit is below the agent's default one: the server decides.
    policy: createArtifactPolicy({ maxFileSizeBytes: 1024 * 1024 }),
    auth: { authenticate: apiKeys.authenticate, sessionOwner: (id) => owners.get(id) ?? null },
  });
  let api: Awaited<ReturnType<typeof startArtifactServer>>;
  let dir: string;
  let aliceKey: string;
  let bobKey: string;

  beforeAll(async () => {
    api = await startArtifactServer(uploads);
    dir = await mkdtemp(join(tmpdir(), "stowage-agent-"));
    aliceKey = (await apiKeys.issue(alice)).apiKey;
    bobKey = (await apiKeys.issue(bob)).apiKey;
  });

  afterAll(async () => {
    await api?.close();
    await rm(dir, { recursive: true, force: true });
    await emptyPrefix(client, prefix);
  });

  const file = async (name: string, bytes: Uint8Array) => {
    const path = join(dir, name);
    await writeFile(path, bytes);
    return path;
  };

  it("uploads a file: its bytes, its type and its checksum land in the session", async () => {
    const bytes = new Uint8Array(randomBytes(200 * 1024));
    const filePath = await file("screen.png", bytes);
    const result = await uploadArtifact({ apiBase: api.url, apiKey: aliceKey, sessionId, filePath });
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    expect(result).toEqual({
      success: true,
      filename: "screen.png",
      key: `sessions/user/alice/${sessionId}/artifacts/screen.png`,
      size: bytes.byteLength,
      sha256,
      attempts: 2,
    });
    expect(Buffer.from((await uploads.store.get(result.key!))!).equals(bytes)).toBe(true);
    expect((await uploads.store.head(result.key!))?.contentType).toBe("image/png");
  });

  it("uploads several files, overwriting by name, and lists them through the API", async () => {
    await mkdir(join(dir, "logs"), { recursive: true });
    const paths = [
      await file("logs/run.log", new TextEncoder().encode("first run\n")),
      await file("data.json", new TextEncoder().encode('{"ok":true}')),
      await file("tool.exe", new Uint8Array(4)),
      join(dir, "missing.txt"),
    ];
    const results = await uploadArtifacts(
      paths.map((filePath) => ({ apiBase: api.url, apiKey: aliceKey, sessionId, filePath })),
    );
    expect(results.map((result) => [result.filename, result.success])).toEqual([
      ["run.log", true],
      ["data.json", true],
      ["tool.exe", false],
      ["missing.txt", false],
    ]);
    expect(results[2]!.error).toMatch(/file type "\.exe" of "tool\.exe" is not allowed/);
    expect(results[3]!.error).toBe(`file not found: ${paths[3]}`);
    // The refused files never reached the API.
    expect(results[2]!.attempts).toBe(0);

    await writeFile(paths[0]!, "second run, longer\n");
    expect(
      (await uploadArtifact({ apiBase: api.url, apiKey: aliceKey, sessionId, filePath: paths[0]! })).success,
    ).toBe(true);

    const response = await fetch(new URL(`agents/${sessionId}/artifacts`, api.url), {
      headers: { authorization: `Bearer ${aliceKey}` },
    });
    const listed = (await response.json()) as { artifacts: { filename: string; size: number }[] };
    expect(listed.artifacts.map(({ filename, size }) => [filename, size])).toEqual([
      ["data.json", 11],
      ["run.log", 19],
      ["screen.png", 200 * 1024],
    ]);
    const download = await fetch(new URL(`agents/${sessionId}/artifacts/run.log/download`, api.url), {
      headers: { authorization: `Bearer ${aliceKey}` },
    });
    const { url } = (await download.json()) as { url: string };
    expect(await (await fetch(url)).text()).toBe("second run, longer\n");
  });

  it("reports the server's refusals without throwing: too large, bad key, someone else's session", async () => {
    const big = await file("big.mp4", new Uint8Array(1024 * 1024 + 1));
    const small = await file("small.txt", new TextEncoder().encode("x"));
    const tooLarge = await uploadArtifact({ apiBase: api.url, apiKey: aliceKey, sessionId, filePath: big });
    expect(tooLarge).toMatchObject({ success: false, filename: "big.mp4", attempts: 1 });
    expect(tooLarge.error).toBe(
      "upload URL request failed: HTTP 400 TOO_LARGE: file size 1.0 MB (1048577 bytes) exceeds the maximum of 1.0 MB (1048576 bytes) per file",
    );
    const badKey = await uploadArtifact({
      apiBase: api.url,
      apiKey: `${aliceKey}x`,
      sessionId,
      filePath: small,
    });
    expect(badKey.error).toBe("upload URL request failed: HTTP 401 UNAUTHORIZED: invalid or revoked API key");
    const notOwner = await uploadArtifact({ apiBase: api.url, apiKey: bobKey, sessionId, filePath: small });
    expect(notOwner.error).toMatch(
      /^upload URL request failed: HTTP 403 FORBIDDEN: user "bob" may not access session/,
    );
    expect(await uploads.store.head(`sessions/user/alice/${sessionId}/artifacts/big.mp4`)).toBeNull();
    expect(await uploads.store.head(`sessions/user/alice/${sessionId}/artifacts/small.txt`)).toBeNull();
  });
});
