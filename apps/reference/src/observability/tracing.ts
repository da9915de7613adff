import {
  type Attributes,
  type Context,
  context,
  createContextKey,
  type Span,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";

/**
 * Spans go through `@opentelemetry/api` only: the app ships no SDK. A host that registers a tracer
 * provider (and a context manager, so that a store operation's span is the child of its request's)
 * gets them; without one every call here is the API's no-op.
 */
export const TRACER_NAME = "@stowage/cli";

export function tracer() {
  return trace.getTracer(TRACER_NAME);
}

/** The agent session a request is about, kept in the active context for the store operations it runs. */
const SESSION_KEY = createContextKey("stowage.session.id");

/**
 * The attributes of a span about one agent session: `session.id`, and the same id as
 * `gen_ai.conversation.id` (the GenAI semantic conventions' name for the conversation an agent's
 * calls belong to: a Stowage session is that conversation).
 */
export function sessionAttributes(sessionId: string | undefined): Attributes {
  return sessionId === undefined ? {} : { "session.id": sessionId, "gen_ai.conversation.id": sessionId };
}

/** `active` with the session id in it; store operations run under it carry the id. */
export function withSession(active: Context, sessionId: string | undefined): Context {
  return sessionId === undefined ? active : active.setValue(SESSION_KEY, sessionId);
}

/** The session id of the active context, if a request put one there. */
export function activeSessionId(): string | undefined {
  const value = context.active().getValue(SESSION_KEY);
  return typeof value === "string" ? value : undefined;
}

/** Ends `span` with the error recorded on it. */
export function endWithError(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  span.end();
}
