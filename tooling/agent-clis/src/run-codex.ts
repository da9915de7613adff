import { type AgentRunOptions, type AgentRunResult, runAgentCli } from "./agent-run.js";

/** The model name Codex is told to use; the mock accepts any. */
const MOCK_MODEL = "gpt-5";

/**
 * Runs `codex exec` (`codex exec resume <id> <prompt>` to continue) against the Responses mock
 * at `baseUrl`, declared as a model provider through `-c` overrides so no config file is needed.
 * Its rollout lands in `<home>/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`.
 */
export function runCodex(options: AgentRunOptions): Promise<AgentRunResult> {
  const provider = `{name="mock",base_url="${options.baseUrl}/v1",wire_api="responses",env_key="OPENAI_API_KEY"}`;
  const overrides = ["-c", "model_provider=mock", "-c", `model_providers.mock=${provider}`, "-m", MOCK_MODEL];
  const args = ["exec", "--skip-git-repo-check", ...overrides];
  if (options.resume !== undefined) args.push("resume", options.resume);
  args.push(options.prompt);
  return runAgentCli(options, args, { OPENAI_API_KEY: "sk-mock" }, ({ stdout, stderr }) => {
    // Codex prints its header (with `session id: <uuid>`) on stderr; stdout carries the answer.
    const match = /session id: ([0-9a-f-]{36})/i.exec(`${stderr}\n${stdout}`);
    return match?.[1];
  });
}
