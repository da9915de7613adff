import { isAbsolute, resolve, sep } from "node:path";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { consoleLogger, describeValue, StowageError } from "@stowage/core";
import { type Redact, toMcpError, toolErrorResult } from "../errors/mcp-errors.js";
import { listResources } from "../resources/resource-list.js";
import { readResource, resourceTemplates } from "../resources/session-resources.js";
import { createResourceSubscriptions } from "../subscriptions/resource-subscriptions.js";
import { artifactsGetTool } from "../tools/artifacts-get.js";
import { queryAgentOutputTool, readArtifactTool } from "../tools/read-tools.js";
import { searchSessionTool } from "../tools/search-session.js";
import type { McpTool } from "../tools/tool.js";
import { uploadArtifactTool } from "../tools/upload-artifact.js";
import { checkingRequests } from "./checked-requests.js";
import { DEFAULT_POLL_INTERVAL_MS, type McpUploads, type StowageMcpServerOptions } from "./options.js";
import { PACKAGE_VERSION } from "./version.js";

/** A Stowage MCP server for one session of one principal. */
export interface StowageMcpServer {
  /** The SDK's low-level server (for `server.notification`, or to add handlers before connecting). */
  readonly server: Server;
  /** The tools offered (depends on the options: `artifacts_get` needs a registry, `upload_artifact` uploads). */
  readonly toolNames: readonly string[];
  /** Connects a transport (stdio, Streamable HTTP, in-memory); one per server. */
  connect(transport: Transport): Promise<void>;
  /** Ends subscriptions and closes the transport. */
  close(): Promise<void>;
  /** `close()`, for `await using server = createStowageMcpServer(…)`. */
  [Symbol.asyncDispose](): Promise<void>;
}

function checkOptions(options: StowageMcpServerOptions): void {
  const session = options?.session;
  if (
    typeof session?.sessionId !== "string" ||
    typeof session.artifacts?.listArtifacts !== "function" ||
    typeof session.router?.read !== "function" ||
    typeof session.router.readBytes !== "function"
  ) {
    throw new StowageError(
      "INVALID_INPUT",
      `session must be { sessionId, artifacts, router } (an OpenedSession), got ${describeValue(session)}`,
    );
  }
  if (options.uploads !== undefined) checkUploads(options.uploads);
  const threadUpdates = options.threadUpdates ?? "notifier";
  if (threadUpdates !== "notifier" && threadUpdates !== "poll") {
    throw new StowageError(
      "INVALID_INPUT",
      `threadUpdates must be "notifier" or "poll", got ${describeValue(threadUpdates)}`,
    );
  }
  const interval = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  if (!Number.isSafeInteger(interval) || interval < 10) {
    throw new StowageError(
      "INVALID_INPUT",
      `pollIntervalMs must be an integer ≥ 10, got ${describeValue(interval)}`,
    );
  }
}

function checkUploads(uploads: McpUploads): void {
  const { root, apiBase, apiKey } = uploads;
  if (typeof root !== "string" || !isAbsolute(root) || root.includes("\u0000")) {
    throw new StowageError(
      "INVALID_INPUT",
      `uploads.root must be an absolute path, got ${describeValue(root)}`,
      {
        reason: "INVALID_UPLOAD_ROOT",
      },
    );
  }
  // Checked again once links are resolved, on each upload (by uploadFile).
  if (resolve(root) === sep) {
    throw new StowageError(
      "INVALID_INPUT",
      `uploads.root ${describeValue(root)} is the file system's root: give the agent's workspace`,
      { reason: "INVALID_UPLOAD_ROOT" },
    );
  }
  if (typeof apiBase !== "string" || typeof apiKey !== "string" || apiKey.length === 0) {
    throw new StowageError(
      "INVALID_INPUT",
      "uploads needs apiBase (the API's URL) and apiKey (a key of the principal)",
    );
  }
}

function redactorOf(paths: readonly string[] | undefined): Redact {
  const hidden = (paths ?? []).filter((path) => path.length > 1);
  return (text) => hidden.reduce((out, path) => out.split(path).join("<data dir>"), text);
}

/**
 * An MCP server (the official SDK's `Server`) over the Stowage stores of ONE principal and ONE
 * session: resources (`artifact://`, `agent://`, `blob:sha256:`, `thread://`, `content-ref://`)
 * with subscriptions, and the tools `read_artifact`, `query_agent_output`, `search_session`,
 * `artifacts_get` (with a registry) and `upload_artifact` (with uploads). Ownership holds by
 * construction: the server can only reach what it was given. Every error leaves as an MCP error
 * (or a tool error result) carrying the StowageError's code.
 */
export function createStowageMcpServer(options: StowageMcpServerOptions): StowageMcpServer {
  checkOptions(options);
  const logger = options.logger ?? consoleLogger;
  const redact = redactorOf(options.redactPaths);
  const server = new Server(
    { name: options.name ?? "stowage", version: PACKAGE_VERSION },
    {
      capabilities: { resources: { subscribe: true, listChanged: false }, tools: { listChanged: false } },
      instructions:
        `Storage of agent session ${options.session.sessionId}: tool outputs (artifact://<id>), subagent outputs ` +
        "(agent://<id>), blobs, thread items and content refs. Read big outputs a page at a time.",
    },
  );

  const tools: McpTool[] = [readArtifactTool(options.session), queryAgentOutputTool(options.session)];
  tools.push(searchSessionTool(options.session, options.threads));
  if (options.registry) tools.push(artifactsGetTool(options.registry));
  if (options.uploads) tools.push(uploadArtifactTool(options.session, options.uploads));
  const toolsByName = new Map(tools.map((tool) => [tool.definition.name, tool]));

  const subscriptions = createResourceSubscriptions({
    session: options.session,
    threads: options.threads,
    hotState: options.hotState,
    pollIntervalMs: options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS,
    threadUpdates: options.threadUpdates ?? "notifier",
    notify: (uri) => server.sendResourceUpdated({ uri }),
    logger,
  });

  /** Runs a protocol request; a StowageError leaves as an McpError with the wire body as `data`. */
  const guarded =
    <A extends unknown[], R>(handler: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await handler(...args);
      } catch (err) {
        if (!StowageError.is(err) && !(err instanceof McpError)) {
          logger.warn(`MCP request failed unexpectedly: ${err instanceof Error ? err.stack : String(err)}`);
        }
        throw toMcpError(err, redact);
      }
    };

  server.setRequestHandler(
    ListResourcesRequestSchema,
    guarded(async (request, extra) => listResources(options, request.params?.cursor, extra.signal)),
  );
  server.setRequestHandler(
    ListResourceTemplatesRequestSchema,
    guarded(async () => ({ resourceTemplates: resourceTemplates(options) })),
  );
  server.setRequestHandler(
    ReadResourceRequestSchema,
    guarded(async (request, extra) => readResource(options, request.params.uri, extra.signal)),
  );
  server.setRequestHandler(
    SubscribeRequestSchema,
    guarded(async (request) => {
      await subscriptions.subscribe(request.params.uri);
      return {};
    }),
  );
  server.setRequestHandler(
    UnsubscribeRequestSchema,
    guarded(async (request) => {
      await subscriptions.unsubscribe(request.params.uri);
      return {};
    }),
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map((tool) => tool.definition),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = toolsByName.get(request.params.name);
    if (!tool) {
      throw toMcpError(
        new StowageError(
          "INVALID_INPUT",
          `no tool ${describeValue(request.params.name)}: this server offers ${[...toolsByName.keys()].join(", ")}`,
          { reason: "UNKNOWN_TOOL" },
        ),
      );
    }
    try {
      return await tool.call(request.params.arguments, extra.signal);
    } catch (err) {
      if (!StowageError.is(err)) {
        logger.warn(
          `MCP tool ${tool.definition.name} failed unexpectedly: ${err instanceof Error ? err.stack : String(err)}`,
        );
      }
      return toolErrorResult(err, redact);
    }
  });

  let closed = false;
  const stop = async () => {
    if (closed) return;
    closed = true;
    await subscriptions.close();
  };
  server.onclose = () => {
    void stop();
  };
  const close = async () => {
    await stop();
    await server.close();
  };
  return {
    server,
    toolNames: tools.map((tool) => tool.definition.name),
    connect: (transport) => server.connect(checkingRequests(transport, (err) => toMcpError(err, redact))),
    close,
    [Symbol.asyncDispose]: close,
  };
}
