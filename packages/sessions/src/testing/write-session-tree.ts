import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type ClaudeSessionLocation, claudeSessionLocation } from "../claude/session-location.js";
import type { SessionTreeFiles } from "./realistic-session.js";

/** Writes `files` (paths relative to the project directory) where Claude Code would keep them. */
export async function writeSessionTree(options: {
  configDir: string;
  cwd: string;
  sessionId: string;
  files: SessionTreeFiles;
}): Promise<ClaudeSessionLocation> {
  const location = await claudeSessionLocation(options);
  for (const [path, content] of options.files) {
    const absolute = join(location.projectDir, ...path.split("/"));
    await mkdir(dirname(absolute), { recursive: true });
    await writeFile(absolute, content);
  }
  return location;
}
