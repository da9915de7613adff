import { mkdir, readdir, realpath, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createBlobStore } from "@stowage/blob-store";
import { createMemoryObjectStore } from "@stowage/core";
import { expectStowageError } from "@stowage/core/testing";
import { tempDirectory } from "@stowage/test-support";
import { beforeAll, describe, expect, it } from "vitest";
import { captureSession } from "../../src/archive/capture-session.js";
import { restoreSession } from "../../src/archive/restore-session.js";
import { chunkSessionBlob } from "../../src/chunks/chunk-session-blob.js";
import { realisticSessionTree } from "../../src/testing/realistic-session.js";
import { writeSessionTree } from "../../src/testing/write-session-tree.js";
import { buildArchive } from "../build-archive.js";

const base = await tempDirectory("stowage-agent-version-");
const sessionId = "3b1f6a2e-8c4d-4e5f-9a0b-1c2d3e4f5a6b";
const encoder = new TextEncoder();
const transcript = encoder.encode(`${JSON.stringify({ type: "user", sessionId, version: "2.1.5" })}\n`);
let cwd: string;
let sourceConfig: string;
let targets = 0;

/** A fresh config directory to restore into. */
const freshTarget = () => join(base, `target-${targets++}`);

/** A hand-written archive whose manifest records `agentVersion` (nothing when undefined). */
const archiveWith = (agentVersion: unknown) =>
  buildArchive({
    sessionId,
    files: [{ path: `${sessionId}.jsonl`, content: transcript }],
    ...(agentVersion === undefined ? {} : { manifest: { agentVersion } }),
  });

beforeAll(async () => {
  await mkdir(join(base, "work"), { recursive: true });
  cwd = await realpath(join(base, "work"));
  sourceConfig = join(base, "source");
  const files = realisticSessionTree({ sessionId, cwd, mainBytes: 30_000, subagents: 1 });
  await writeSessionTree({ configDir: sourceConfig, cwd, sessionId, files });
});

describe("agent versions at capture and restore", () => {
  it("a capture records the version the transcript's entries carry, kept by a chunked capture", async () => {
    const captured = await captureSession({ configDir: sourceConfig, cwd, sessionId });
    expect(captured.manifest.agentVersion).toBe("2.1.5");
    expect(captured.manifest.version).toBe(1);
    const restored = await restoreSession(captured, {
      configDir: freshTarget(),
      agentVersion: "2.1.5 (Claude Code)",
    });
    expect(restored.agentVersion).toBe("2.1.5");
    expect(restored.agentVersionCheck).toEqual({ verdict: "same", version: "2.1.5" });

    const blobs = createBlobStore({ store: createMemoryObjectStore() });
    const direct = await captureSession({ configDir: sourceConfig, cwd, sessionId, blobs });
    expect(direct.manifest.agentVersion).toBe("2.1.5");
    const rechunked = await chunkSessionBlob(captured, { blobs });
    for (const chunked of [direct, rechunked]) {
      const again = await restoreSession(chunked, { configDir: freshTarget(), blobs, agentVersion: "2.1.9" });
      expect(again.format).toBe("chunked");
      expect(again.agentVersion).toBe("2.1.5");
      expect(again.agentVersionCheck).toMatchObject({
        verdict: "differs",
        captured: "2.1.5",
        installed: "2.1.9",
      });
    }
  });

  it("a major version apart is refused with CONFLICT before anything is written", async () => {
    const target = freshTarget();
    const err = await expectStowageError(
      restoreSession(await archiveWith("1.0.128"), {
        configDir: target,
        agentVersion: "2.1.330 (Claude Code)",
      }),
      "CONFLICT",
      "AGENT_VERSION_MISMATCH",
    );
    expect(err.details).toEqual({ agent: "claude-code", captured: "1.0.128", installed: "2.1.330" });
    await expect(readdir(target)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("a minor version apart is restored, with the warning in the result", async () => {
    const restored = await restoreSession(await archiveWith("2.1.4"), {
      configDir: freshTarget(),
      agentVersion: "2.1.330",
    });
    expect(restored.files).toHaveLength(1);
    expect(restored.agentVersionCheck).toMatchObject({
      verdict: "differs",
      captured: "2.1.4",
      installed: "2.1.330",
    });
  });

  it("an old archive that records no version, or no installed version, restores unchecked", async () => {
    const old = await restoreSession(await archiveWith(undefined), {
      configDir: freshTarget(),
      agentVersion: "2.1.330",
    });
    expect(old.agentVersion).toBeUndefined();
    expect(old.agentVersionCheck).toEqual({ verdict: "unknown" });
    const notGiven = await restoreSession(await archiveWith("1.0.0"), { configDir: freshTarget() });
    expect(notGiven.agentVersion).toBe("1.0.0");
    expect(notGiven.agentVersionCheck).toEqual({ verdict: "unknown" });
  });

  it("a hostile version in the manifest or given as installed is unknown, never an error nor echoed", async () => {
    const hostile = [
      "9".repeat(100_000),
      "1.0.0\u0000",
      "\u001b[2J1.0.0",
      "1.0.0\nAGENT_VERSION_MISMATCH",
      "latest",
      42,
      { major: 1 },
      null,
    ];
    for (const value of hostile) {
      const restored = await restoreSession(await archiveWith(value), {
        configDir: freshTarget(),
        agentVersion: "2.1.330",
      });
      expect(restored.agentVersion).toBeUndefined();
      expect(restored.agentVersionCheck).toEqual({ verdict: "unknown" });
      // As `--version` output, "1.0.0\n…" is version 1.0.0: its first word that is a version.
      if (typeof value === "string" && !value.startsWith("1.0.0\n")) {
        const installed = await restoreSession(await archiveWith("1.0.0"), {
          configDir: freshTarget(),
          agentVersion: value,
        });
        expect(installed.agentVersionCheck).toEqual({ verdict: "unknown" });
      }
    }
    const err = await expectStowageError(
      restoreSession(await archiveWith("1.0.0"), {
        configDir: freshTarget(),
        agentVersion: 2 as unknown as string,
      }),
      "INVALID_INPUT",
    );
    expect(err.message).toContain("agentVersion");
  });

  it("a Codex rollout records its session_meta's cli_version; a 0.x minor apart restores with a warning", async () => {
    const codexHome = join(base, "codex");
    const day = join(codexHome, "sessions", "2026", "11", "23");
    const id = "019e1625-789d-76c0-80ab-3724b5ddb799";
    await mkdir(day, { recursive: true });
    await writeFile(
      join(day, `rollout-2026-11-23T04-00-00-${id}.jsonl`),
      `${JSON.stringify({ timestamp: "2026-11-23T04:00:00.000Z", type: "session_meta", payload: { id, cli_version: "0.125.0" } })}\n`,
    );
    const captured = await captureSession({ agent: "codex", codexHome, sessionId: id });
    expect(captured.manifest.agentVersion).toBe("0.125.0");
    const into = { codexHome: join(base, "codex-restored") };
    const restored = await restoreSession(captured, { ...into, agentVersion: "codex-cli 0.169.0" });
    expect(restored.agentVersionCheck).toMatchObject({ verdict: "differs", installed: "0.169.0" });
    await expectStowageError(
      restoreSession(captured, { ...into, agentVersion: "codex-cli 1.0.0" }),
      "CONFLICT",
      "AGENT_VERSION_MISMATCH",
    );
  });
});
