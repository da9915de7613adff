import { randomUUID } from "node:crypto";
import { mkdir, realpath } from "node:fs/promises";
import { join } from "node:path";
import { realisticSessionTree, writeSessionTree } from "@stowage/sessions/testing";
import { tempDirectory } from "@stowage/test-support";
import { expect, it } from "vitest";
import { describeBackends } from "../../test/backends.js";
import { createPostgresSessionStore } from "./session-store.js";

// The SDK reads CLAUDE_CONFIG_DIR once per process; vitest runs this file in its own fork.
const base = await tempDirectory("stowage-import-");
process.env.CLAUDE_CONFIG_DIR = join(base, ".claude");
const { importSessionToStore, InMemorySessionStore } = await import("@anthropic-ai/claude-agent-sdk");

describeBackends("importSessionToStore into the postgres SessionStore", (backend) => {
  it("imports a local session with its subagents exactly as into InMemorySessionStore, and a replay adds nothing", async () => {
    await mkdir(join(base, `work-${backend.name}`), { recursive: true });
    const cwd = await realpath(join(base, `work-${backend.name}`));
    const sessionId = randomUUID();
    const files = realisticSessionTree({ sessionId, cwd, mainBytes: 300_000, subagents: 2, legacyAgents: 0 });
    const location = await writeSessionTree({
      configDir: process.env.CLAUDE_CONFIG_DIR!,
      cwd,
      sessionId,
      files,
    });
    const ours = createPostgresSessionStore(backend.connection().db);
    const reference = new InMemorySessionStore();
    await importSessionToStore(sessionId, ours, { dir: cwd });
    await importSessionToStore(sessionId, reference, { dir: cwd });
    const key = { projectKey: location.projectKey, sessionId };
    const main = await ours.load(key);
    expect(main?.length).toBeGreaterThan(20);
    expect(main).toEqual(await reference.load(key));
    const subkeys = (await ours.listSubkeys(key)).sort();
    expect(subkeys).toEqual((await reference.listSubkeys(key)).sort());
    expect(subkeys).toHaveLength(2);
    for (const subpath of subkeys) {
      expect(await ours.load({ ...key, subpath })).toEqual(await reference.load({ ...key, subpath }));
    }
    const [summary] = await ours.listSessionSummaries(location.projectKey);
    const [expected] = await reference.listSessionSummaries(location.projectKey);
    expect(summary?.data).toEqual(expected?.data);
    // Importing again (a retry) stores no uuid-bearing entry twice; uuid-less lines (snapshots,
    // summaries) are appended again, as the SessionStore contract asks.
    await importSessionToStore(sessionId, ours, { dir: cwd });
    const replayed = (await ours.load(key))!;
    const withUuid = (entries: typeof replayed) => entries.filter((entry) => entry.uuid !== undefined);
    expect(withUuid(replayed)).toEqual(withUuid(main!));
    expect(replayed.length).toBe(main!.length + main!.filter((entry) => entry.uuid === undefined).length);
  }, 120_000);
});
