import { isSessionId } from "@stowage/core";

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function parse(exported: Uint8Array): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(exported));
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The child sessions an OpenCode export hands work to: a `task` tool part runs its subagent in a
 * session of its own, named in the part's `state.metadata.sessionId` (OpenCode 1.18). In the
 * order the export gives them, each once; an id that is not a safe session id is left out.
 */
export function childSessionIds(exported: Uint8Array): string[] {
  const ids = new Set<string>();
  const messages = parse(exported)?.messages;
  for (const message of Array.isArray(messages) ? messages : []) {
    const parts = isRecord(message) && Array.isArray(message.parts) ? message.parts : [];
    for (const part of parts) {
      if (!isRecord(part) || part.type !== "tool" || part.tool !== "task") continue;
      const state = isRecord(part.state) ? part.state : undefined;
      const id = isRecord(state?.metadata) ? state.metadata.sessionId : undefined;
      if (isSessionId(id)) ids.add(id);
    }
  }
  return [...ids];
}

/** The session an export's session was started from (`info.parentID`), if any. */
export function exportParentId(exported: Uint8Array): string | undefined {
  const info = parse(exported)?.info;
  const parent = isRecord(info) ? info.parentID : undefined;
  return isSessionId(parent) ? parent : undefined;
}
