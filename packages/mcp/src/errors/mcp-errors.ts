import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { type ErrorBody, errorBody, errorFromBody, type StowageError } from "@stowage/core";

/** MCP's JSON-RPC code for a resource that does not exist (the specification's `-32002`). */
const RESOURCE_NOT_FOUND = -32002;

/** Where a tool error result carries the StowageError's wire body, beside the text the model reads. */
const STOWAGE_ERROR_META_KEY = "dev.stowage/error";

/** Takes server paths (the data directory) out of a wire body before it leaves, as the HTTP API does. */
export type Redact = (text: string) => string;

/**
 * Longest error message (and string in its details) that leaves the server. Messages name what
 * was wrong and what is accepted in a line; one that quotes a caller's input at length (a source
 * below that echoes a key of megabytes) is cut here, whatever it came from, keeping its end, where
 * the way on is said.
 */
const MAX_ERROR_MESSAGE_CHARS = 240;
/** Characters of a cut message's end kept. */
const KEPT_END_CHARS = 80;

function shortened(text: string): string {
  if (text.length <= MAX_ERROR_MESSAGE_CHARS) return text;
  return `${text.slice(0, MAX_ERROR_MESSAGE_CHARS - KEPT_END_CHARS - 1)}…${text.slice(-KEPT_END_CHARS)}`;
}

/** The wire body as it leaves: server paths redacted, every string bounded. */
function outgoingBody(body: ErrorBody, redact: Redact): ErrorBody {
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") return shortened(redact(value));
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item)]));
    }
    return value;
  };
  return walk(body) as ErrorBody;
}

function jsonRpcCodeOf(body: ErrorBody): number {
  if (body.code === "NOT_FOUND") return RESOURCE_NOT_FOUND;
  if (body.code === "INVALID_INPUT" || body.code === "TOO_LARGE") return ErrorCode.InvalidParams;
  return ErrorCode.InternalError;
}

/**
 * A protocol-level error (a failed `resources/read`, `resources/subscribe`) as an `McpError`
 * whose `data` is core's one wire body `{ error, code, reason?, details? }`. Anything that is not
 * a StowageError leaves as a bare INTERNAL: no internal detail reaches the client.
 */
export function toMcpError(err: unknown, redact: Redact = (text) => text): McpError {
  if (err instanceof McpError) return err;
  const body = outgoingBody(errorBody(err), redact);
  const error = new McpError(jsonRpcCodeOf(body), body.error, body);
  // The SDK sends `message` as it is and the client's McpError prefixes it again: without this the
  // client reads "MCP error -32602: MCP error -32602: …".
  error.message = body.error;
  return error;
}

/**
 * A failed tool call as a tool result (`isError: true`), which MCP clients hand to the model: the
 * text says the code and the message, `structuredContent` and `_meta` carry the wire body.
 */
export function toolErrorResult(err: unknown, redact: Redact = (text) => text) {
  const body = outgoingBody(errorBody(err), redact);
  const reason = body.reason === undefined ? "" : ` (${body.reason})`;
  return {
    isError: true,
    content: [{ type: "text" as const, text: `${body.code}${reason}: ${body.error}` }],
    structuredContent: { ...body },
    _meta: { [STOWAGE_ERROR_META_KEY]: body },
  };
}

/**
 * The StowageError inside what an MCP client got back: an `McpError` thrown by a request, or a
 * tool result with `isError`. Null when the value carries none (a transport failure, a success).
 */
export function errorFromMcp(value: unknown): StowageError | null {
  // The wire body is read back by core, as an HTTP client of the API reads it.
  const error =
    value instanceof McpError
      ? errorFromBody(value.data)
      : typeof value === "object" && value !== null && (value as { isError?: unknown }).isError === true
        ? errorFromBody((value as { _meta?: Record<string, unknown> })._meta?.[STOWAGE_ERROR_META_KEY])
        : undefined;
  return error ?? null;
}
