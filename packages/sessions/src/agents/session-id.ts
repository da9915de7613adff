// The one session-id rule lives in core, shared with `@stowage/artifacts` and the apps; this
// package's modules take it from here.
export { assertSessionId, isSessionId } from "@stowage/core";
