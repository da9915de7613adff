import { type AgentRunOptions, type AgentRunResult, runAgentCli } from "./agent-run.js";

export interface ClaudeRunOptions extends AgentRunOptions {
  /** `--mcp-config`: a file path, or the configuration object (passed as JSON). */
  mcpConfig?: string | Record<string, unknown>;
}

/**
 * Runs Claude Code headless (`claude -p <prompt> --output-format json`, `--resume <id>` to
 * continue) against the Anthropic mock at `baseUrl`. Its session files land in
 * `<home>/.claude/projects/<key of cwd>/<sessionId>.jsonl`.
 */
export function runClaude(options: ClaudeRunOptions): Promise<AgentRunResult> {
  const args = ["-p", options.prompt, "--output-format", "json"];
  if (options.resume !== undefined) args.push("--resume", options.resume);
  if (options.mcpConfig !== undefined) {
    args.push(
      "--mcp-config",
      typeof options.mcpConfig === "string" ? options.mcpConfig : JSON.stringify(options.mcpConfig),
    );
  }
  const env = {
    ANTHROPIC_BASE_URL: options.baseUrl,
    ANTHROPIC_API_KEY: "sk-ant-mock",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
  };
  return runAgentCli(options, args, env, ({ stdout }) => {
    try {
      const parsed = JSON.parse(stdout) as { session_id?: unknown };
      return typeof parsed.session_id === "string" ? parsed.session_id : undefined;
    } catch {
      return undefined;
    }
  });
}
