import { mkdir, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tempDirectory } from "@stowage/test-support";
import { describe, expect, it } from "vitest";
import { listClaudeSessions } from "../../src/claude/list-claude-sessions.js";

const A = "0f6c3a52-1b7e-4c1a-9d55-3c2b8f7e9a10";
const B = "9b2f7c1e-3d4a-4b5c-8d6e-7f8091a2b3c4";

describe("listClaudeSessions", () => {
  it("lists the transcripts of a project, not legacy subagent files, links or companions", async () => {
    const configDir = await tempDirectory("stowage-claude-list-");
    const projectDir = join(configDir, "projects", "-work-app");
    await mkdir(join(projectDir, A, "subagents"), { recursive: true });
    await writeFile(join(projectDir, `${A}.jsonl`), '{"type":"user"}\n');
    await writeFile(join(projectDir, `${B}.jsonl`), "");
    await writeFile(join(projectDir, A, "subagents", "agent-explore.jsonl"), "{}\n");
    // Claude Code before 2.1.2 wrote subagent transcripts beside the sessions.
    await writeFile(join(projectDir, "agent-legacy01.jsonl"), "{}\n");
    await writeFile(join(projectDir, "notes.txt"), "not a transcript");
    await symlink(join(projectDir, `${A}.jsonl`), join(projectDir, "aaaaaaaa-link.jsonl"));
    const modified = new Date("2026-11-21T09:00:00.000Z");
    await utimes(join(projectDir, `${A}.jsonl`), modified, modified);

    const listing = await listClaudeSessions({ configDir, projectKey: "-work-app" });
    expect(listing).toEqual({
      projectKey: "-work-app",
      projectDir,
      sessions: [
        { sessionId: A, transcriptPath: join(projectDir, `${A}.jsonl`), sizeBytes: 16, modified },
        {
          sessionId: B,
          transcriptPath: join(projectDir, `${B}.jsonl`),
          sizeBytes: 0,
          modified: expect.any(Date),
        },
      ],
    });
    // From a working directory, with Claude Code's project-key rule.
    expect((await listClaudeSessions({ configDir, cwd: "/work/app" })).sessions).toHaveLength(2);
  });

  it("finds no sessions for a project Claude Code never ran in", async () => {
    const configDir = await tempDirectory("stowage-claude-list-");
    expect(await listClaudeSessions({ configDir, cwd: "/never/ran/here" })).toEqual({
      projectKey: "-never-ran-here",
      projectDir: join(configDir, "projects", "-never-ran-here"),
      sessions: [],
    });
  });
});
