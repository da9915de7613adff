export { errorFromMcp } from "./errors/mcp-errors.js";
export { createStowageMcpServer, type StowageMcpServer } from "./server/create-server.js";
export type { McpSession, McpUploads, StowageMcpServerOptions } from "./server/options.js";
export {
  createMcpHttpSessions,
  MCP_SESSION_HEADER,
  type McpHttpRequestScope,
  type McpHttpSessions,
  type McpHttpSessionsOptions,
} from "./transports/http-sessions.js";
export { runStdioServer, type StdioServerOptions } from "./transports/stdio.js";
