/** The archive entry holding an OpenCode session: what `opencode export <id>` printed. */
export function opencodeExportFileName(sessionId: string): string {
  return `${sessionId}.json`;
}
