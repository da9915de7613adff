export { AGENT_CLI_PINS, type AgentCliName, type AgentCliPin } from "./agent-cli-pins.js";
export { type AgentContainer, createAgentContainer } from "./agent-container.js";
export { type AgentRunOptions, type AgentRunResult, agentEnv, REAL_CLI_RUN_TIMEOUT_MS } from "./agent-run.js";
export { agentCliCacheRoot } from "./cache-directory.js";
export {
  type AgentCli,
  INSTALL_MARKER,
  type InstallAgentCliOptions,
  installAgentCli,
  type MissingAgentCli,
  type ReadyAgentCli,
} from "./install-agent-cli.js";
export {
  type AnthropicMockOptions,
  type AnthropicReply,
  type AnthropicRequest,
  defaultAnthropicReply,
  startAnthropicMock,
} from "./mock-anthropic.js";
export {
  type ChatMockOptions,
  type ChatReply,
  type ChatRequest,
  defaultChatReply,
  startChatMock,
} from "./mock-openai-chat.js";
export {
  defaultResponsesReply,
  type ResponsesMockOptions,
  type ResponsesReply,
  type ResponsesRequest,
  startResponsesMock,
} from "./mock-openai-responses.js";
export {
  type LoggedRequest,
  type MockModelServer,
  type MockServerOptions,
  requestsMention,
} from "./mock-server.js";
export { type ClaudeRunOptions, runClaude } from "./run-claude.js";
export { runCodex } from "./run-codex.js";
export {
  listOpenCodeSessions,
  OPENCODE_CONFIG_FILE,
  openCodeEnv,
  runOpenCode,
  writeOpenCodeConfig,
} from "./run-opencode.js";
