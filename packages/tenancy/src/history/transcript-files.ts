import type { SessionArchiveManifest } from "@stowage/sessions";

/** How a file of a stored session is read as a thread, when it is a transcript. */
export type TranscriptFormat = "claude-code" | "codex";

/** A transcript of a stored session: the main one, or a subagent's. */
export interface TranscriptFile {
  path: string;
  format: TranscriptFormat;
  /** `main` is the session's own transcript; a subagent's names its agent id. */
  role: "main" | "subagent";
  agentId?: string;
  /** What the viewer calls it: `main`, `subagent Explore (a4f2c91)`. */
  label: string;
}

// Claude Code's subagents: `<sessionId>/subagents/agent-<id>.jsonl` (2.1) and `agent-<id>.jsonl`
// beside the main transcript (2.0).
const SUBAGENT = /^(?:[^/]+\/subagents\/)?agent-([A-Za-z0-9_-]+)\.jsonl$/;

/** The subagent type its `.meta.json` names (`{ "agentType": "Explore" }`), if it names one. */
function subagentType(meta: Uint8Array | undefined): string | undefined {
  if (!meta || meta.byteLength > 64 * 1024) return undefined;
  try {
    const type = (JSON.parse(new TextDecoder().decode(meta)) as { agentType?: unknown }).agentType;
    return typeof type === "string" && type.length <= 100 ? type : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `path` is read to make the transcripts' list: the transcripts and their subagents' meta files. */
export function isTranscriptInput(agent: string, path: string): boolean {
  if (agent === "codex") return path.endsWith(".jsonl");
  if (agent === "claude-code") return path.endsWith(".jsonl") || path.endsWith(".meta.json");
  return false;
}

/**
 * The transcripts among a stored session's files, the main one first: Claude Code's
 * `<sessionId>.jsonl` and its subagents' transcripts, a Codex rollout. An OpenCode session is its
 * CLI's export (`<sessionId>.json`), which no thread-items adapter reads: it has none.
 */
export function transcriptFiles(
  manifest: SessionArchiveManifest,
  files: ReadonlyMap<string, Uint8Array>,
): TranscriptFile[] {
  if (manifest.agent === "codex") {
    return manifest.files
      .filter((file) => file.path.endsWith(".jsonl"))
      .map((file, index) => ({
        path: file.path,
        format: "codex",
        role: index === 0 ? "main" : "subagent",
        label: index === 0 ? "main" : file.path,
      }));
  }
  if (manifest.agent !== "claude-code") return [];
  const found: TranscriptFile[] = [];
  for (const { path } of manifest.files) {
    if (path === `${manifest.sessionId}.jsonl`) {
      found.unshift({ path, format: "claude-code", role: "main", label: "main" });
      continue;
    }
    const agentId = SUBAGENT.exec(path)?.[1];
    if (agentId === undefined) continue;
    const type = subagentType(files.get(path.replace(/\.jsonl$/, ".meta.json")));
    found.push({
      path,
      format: "claude-code",
      role: "subagent",
      agentId,
      label: `subagent ${type ? `${type} ` : ""}(${agentId})`,
    });
  }
  return found;
}
