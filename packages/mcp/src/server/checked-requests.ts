import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolRequestSchema,
  InitializeRequestSchema,
  isJSONRPCRequest,
  type JSONRPCMessage,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { StowageError } from "@stowage/core";
import { describeIssues } from "../errors/issues.js";

/** The SDK's schema of every request this server answers, by method. */
const REQUEST_SCHEMAS = new Map(
  [
    InitializeRequestSchema,
    PingRequestSchema,
    ListResourcesRequestSchema,
    ListResourceTemplatesRequestSchema,
    ReadResourceRequestSchema,
    SubscribeRequestSchema,
    UnsubscribeRequestSchema,
    ListToolsRequestSchema,
    CallToolRequestSchema,
  ].map((schema) => [schema.shape.method.value as string, schema]),
);

/**
 * What is wrong with a request's params (INVALID_INPUT, reason `INVALID_PARAMS`, in one line), or
 * undefined when they fit its method's schema, or it is no request this server answers.
 */
function paramsProblem(message: JSONRPCMessage): StowageError | undefined {
  if (!isJSONRPCRequest(message)) return undefined;
  const schema = REQUEST_SCHEMAS.get(message.method);
  if (!schema) return undefined;
  const parsed = schema.safeParse(message);
  if (parsed.success) return undefined;
  return new StowageError("INVALID_INPUT", `${message.method}: ${describeIssues(parsed.error.issues)}`, {
    reason: "INVALID_PARAMS",
  });
}

/**
 * `inner`, with every request whose params do not fit its method's schema answered before the SDK
 * sees it: -32602 (InvalidParams) and a line saying what was wrong (`answer` makes the error).
 * Without this the SDK's own parse in front of each handler throws zod's error, which leaves as
 * -32603 (InternalError) with every issue's JSON as its message (`tools/call` as -32602 with the
 * same dump). The rest passes through untouched, so the SDK still answers what it answers.
 */
export function checkingRequests(
  inner: Transport,
  answer: (err: StowageError) => { code: number; message: string; data?: unknown },
): Transport {
  const outer: Transport = {
    start: () => inner.start(),
    send: (message, options) => inner.send(message, options),
    close: () => inner.close(),
    get sessionId() {
      return inner.sessionId;
    },
    ...(inner.setProtocolVersion
      ? { setProtocolVersion: (version: string) => inner.setProtocolVersion?.(version) }
      : {}),
  };
  const closed = inner.onclose;
  const failed = inner.onerror;
  inner.onclose = () => {
    closed?.();
    outer.onclose?.();
  };
  inner.onerror = (error) => {
    failed?.(error);
    outer.onerror?.(error);
  };
  inner.onmessage = (message, extra) => {
    const problem = paramsProblem(message);
    if (!problem || !isJSONRPCRequest(message)) {
      outer.onmessage?.(message, extra);
      return;
    }
    const { code, message: text, data } = answer(problem);
    const error = { code, message: text, ...(data === undefined ? {} : { data }) };
    inner.send({ jsonrpc: "2.0", id: message.id, error }).catch((err: unknown) => {
      outer.onerror?.(err instanceof Error ? err : new Error(String(err)));
    });
  };
  return outer;
}
