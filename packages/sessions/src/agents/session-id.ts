// The one session-id rule lives in core, shared with `@stowage/artifacts` and the apps; this
// package re-exports it, as it always has, for its users.
export { assertSessionId, isSessionId, MAX_SESSION_ID_LENGTH } from "@stowage/core";
