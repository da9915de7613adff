/** The archive entry holding an OpenCode session: what `opencode export <id>` printed. */
export function opencodeExportFileName(sessionId: string): string {
  return `${sessionId}.json`;
}

/** The session an archive entry `<id>.json` holds the export of (the session's own, or a child session's). */
export function opencodeExportSessionId(path: string): string {
  return path.slice(0, -".json".length);
}
