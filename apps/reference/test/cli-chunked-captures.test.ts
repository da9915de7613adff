// `stowage session capture` keeps a session as chunks in the principal's blobs by default: a
// follow-up stores only what is new, `session stored` shows both sizes, garbage collection keeps
// what a live capture needs, `session restore` and the server rebuild it byte for byte. Real transcript.
import { createHash } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { claudeSessionLocation, fromTransport, restoreSession } from "@stowage/sessions";
import { realTranscripts, tempDirectory } from "@stowage/test-support";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { startServer } from "../src/http/server.js";
import { stowage as run } from "./support/cli.js";
import { seedEmbeddedDatabase } from "./support/seed-embedded-database.js";
import { quietLog } from "./support/test-app.js";

const real = realTranscripts("stowage session capture as chunks");
/** A real Claude Code 2.0.76 transcript of 1.4 MB. */
const CLAUDE = "claude-code/session-3fe1b6bc.jsonl";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

interface CaptureOutput {
  sessionId: string;
  format: string;
  codec: string;
  rawSizeBytes: number;
  storedBytes: number;
  blobSizeBytes: number;
}

describe.skipIf(!real.present)("stowage session capture|stored|restore, kept as chunks", () => {
  let dir: string;
  let env: Record<string, string>;
  const followUp = Buffer.from(real.present ? real.read(CLAUDE) : "");
  const first = followUp.subarray(0, followUp.lastIndexOf("\n", Math.floor(followUp.byteLength * 0.9)) + 1);
  const sessionId = real.present
    ? (real.records(CLAUDE).find((record) => typeof record.sessionId === "string")!.sessionId as string)
    : "";

  beforeAll(async () => {
    dir = await tempDirectory("stowage-cli-chunked-");
    env = { STOWAGE_DATA_DIR: join(dir, ".stowage") };
    await seedEmbeddedDatabase(env.STOWAGE_DATA_DIR!);
  });

  const stowage = async (...argv: string[]) => (await run(argv, { cwd: dir, env })).stdout;
  const container = () => ({ configDir: join(dir, "container", ".claude"), cwd: join(dir, "workspace") });

  /** The transcript as the agent wrote it, then `session capture --json` of it. */
  async function capture(bytes: Uint8Array, ...extra: string[]): Promise<CaptureOutput> {
    const { configDir, cwd } = container();
    await mkdir(cwd, { recursive: true });
    const location = await claudeSessionLocation({ configDir, cwd, sessionId });
    await mkdir(dirname(location.transcriptPath), { recursive: true });
    await writeFile(location.transcriptPath, bytes);
    const argv = ["session", "capture", "--config-dir", configDir, "--cwd", cwd, "--session", sessionId];
    return JSON.parse(await stowage(...argv, "--user", "cli", "--json", ...extra)) as CaptureOutput;
  }

  /** `session restore --json` of a request into a fresh config directory: each restored file's sha256. */
  async function restore(requestId: string, into: string): Promise<Map<string, string>> {
    const configDir = join(dir, into, ".claude");
    const restored = JSON.parse(
      await stowage(
        "session",
        "restore",
        "--request",
        requestId,
        "--user",
        "cli",
        "--config-dir",
        configDir,
        "--cwd",
        container().cwd,
        "--json",
      ),
    ) as { directory: string; files: number };
    expect(restored.files).toBe(1);
    return new Map([[sessionId, sha256(await readFile(join(restored.directory, `${sessionId}.jsonl`)))]]);
  }

  it("stores a capture as chunks and a follow-up only what is new; gc keeps them; restore is byte for byte", async () => {
    const firstRun = await capture(first, "--request", "req-chunked");
    expect(firstRun).toMatchObject({ sessionId, format: "chunked" });
    expect(firstRun.storedBytes).toBeGreaterThan(0);
    const followRun = await capture(followUp, "--request", "req-chunked");
    expect(followRun.rawSizeBytes).toBeGreaterThan(followUp.byteLength);
    // Only the chunks the first capture did not hold: a fraction of it.
    expect(followRun.storedBytes).toBeLessThan(firstRun.storedBytes / 3);

    const stored = JSON.parse(await stowage("session", "stored", "--user", "cli", "--json"));
    expect(stored).toEqual([
      expect.objectContaining({
        sessionId,
        requestId: "req-chunked",
        rawSizeBytes: followRun.rawSizeBytes,
        storedBytes: followRun.storedBytes,
      }),
    ]);

    // A collection with no grace finds the live capture's chunks referenced (its roots read the
    // stored sessions' manifests) and keeps them: the restore below needs every one.
    const gc = JSON.parse(await stowage("blob", "gc", "--grace-hours", "0", "--json")) as {
      referenced: number;
    };
    expect(gc.referenced).toBeGreaterThan(10);
    await rm(join(dir, "container"), { recursive: true, force: true });
    expect(await restore("req-chunked", "restored")).toEqual(new Map([[sessionId, sha256(followUp)]]));
  });

  it("--format adr keeps one self-contained gzip blob in the row", async () => {
    const adr = await capture(followUp, "--request", "req-adr", "--format", "adr");
    expect(adr).toMatchObject({ format: "adr", codec: "gzip" });
    expect(adr.storedBytes).toBe(adr.blobSizeBytes);
    await rm(join(dir, "container"), { recursive: true, force: true });
    expect(await restore("req-adr", "restored-adr")).toEqual(new Map([[sessionId, sha256(followUp)]]));
  });

  it("the server on the same data directory serves the CLI's chunked capture in the wire format", async () => {
    const config = await loadConfig({ ...env, STOWAGE_PORT: "0" }, dir);
    const server = await startServer(config, { log: quietLog });
    try {
      const { apiKey } = await server.services.apiKeys.issue({ kind: "user", id: "cli" });
      const latest = await fetch(`${server.url}/requests/req-chunked/session-blobs/latest`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(latest.status).toBe(200);
      const restored = await restoreSession(fromTransport(await latest.json()), {
        configDir: join(dir, "served", ".claude"),
        cwd: container().cwd,
      });
      expect(sha256(await readFile(join(restored.directory!, `${sessionId}.jsonl`)))).toBe(sha256(followUp));
    } finally {
      await server.close();
    }
  });
});
