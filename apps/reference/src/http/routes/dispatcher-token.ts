import type { AppContext } from "../context.js";

/**
 * The header a request that only a session's dispatcher may make carries its token in (deleting a
 * claimed session, releasing its claim): a header, never the URL, so that it is not logged.
 */
export const DISPATCHER_TOKEN_HEADER = "x-stowage-dispatcher-token";

/** The dispatcher token the request carries, or undefined; the hot-state store judges it. */
export function dispatcherTokenOf(c: AppContext): string | undefined {
  const token = c.req.header(DISPATCHER_TOKEN_HEADER);
  return token === undefined || token === "" ? undefined : token;
}
