export { errorFromMcp, STOWAGE_ERROR_META_KEY, toMcpError } from "./errors/mcp-errors.js";
export {
  DEFAULT_PAGE_LINES,
  MAX_PAGE_LINES,
  MAX_RESOURCE_READ_BYTES,
  MAX_SOURCE_READ_BYTES,
  MAX_TOOL_RESULT_BYTES,
} from "./resources/paged-read.js";
export { MAX_LISTED_PER_PAGE } from "./resources/resource-list.js";
export {
  BLOB_SCHEME,
  CONTENT_REF_SCHEME,
  HOT_STATE_SCHEME,
  THREAD_SCHEME,
} from "./resources/resource-uris.js";
export { MAX_BLOB_READ_BYTES } from "./resources/session-resources.js";
export { MAX_THREAD_PAGE_ITEMS } from "./resources/thread-page.js";
export { createStowageMcpServer, type StowageMcpServer } from "./server/create-server.js";
export {
  DEFAULT_POLL_INTERVAL_MS,
  type McpSession,
  type McpUploads,
  type StowageMcpServerOptions,
} from "./server/options.js";
export { MAX_SUBSCRIPTIONS } from "./subscriptions/resource-subscriptions.js";
export { MAX_SEARCH_MATCHES } from "./tools/search-session.js";
export { MAX_SEARCH_SCANNED_BYTES, MAX_SEARCH_SOURCE_BYTES } from "./tools/session-search.js";
export {
  createMcpHttpSessions,
  DEFAULT_HTTP_SESSION_IDLE_MS,
  DEFAULT_MAX_HTTP_SESSIONS,
  DEFAULT_MAX_HTTP_SESSIONS_PER_OWNER,
  MCP_SESSION_HEADER,
  type McpHttpRequestScope,
  type McpHttpSessions,
  type McpHttpSessionsOptions,
} from "./transports/http-sessions.js";
export { runStdioServer, type StdioServerOptions } from "./transports/stdio.js";
