import { errorResponse, type JsonBudget, StowageError } from "@stowage/core";

/** The bodyLimit answer: TOO_LARGE in the one wire format, like every other error. */
export function tooLarge(limitBytes: number) {
  return () =>
    errorResponse(
      new StowageError("TOO_LARGE", `request body is larger than the limit of ${limitBytes} bytes`, {
        details: { limitBytes },
      }),
    );
}

// What each route's JSON body may cost (see core's `JsonBudget`): bytes, nesting, and values
// (array elements and object members). JSON.parse holds the event loop for the whole body, and
// its time follows the structure as much as the size (15 MiB of `[{},{},…]` took 3 s), so every
// route reads its body within the budget of the biggest body it really takes, and anything past
// it is refused while it is read, before it is parsed. `STOWAGE_BODY_LIMIT_MB` (16 MiB by
// default) bounds every JSON body on top of these.

/** Nesting of a body whose shape the route fixes; the deepest, a hot-state PUT, is 4 (body, state, artifact_index, entry). */
const FIXED_SHAPE_DEPTH = 8;

/** A body of a few short fields (`{ sessionId }`, `{ artifact_id, offset }`): well under 1 KiB. */
export const SMALL_JSON_BODY: Readonly<JsonBudget> = Object.freeze({
  maxBytes: 16 * 1024,
  maxDepth: FIXED_SHAPE_DEPTH,
  maxValues: 64,
});

/**
 * `PUT /sessions/:id/hot-state`. A maximal state (every field and list at its schema limit) is
 * 1.38 M characters in 1,814 values; sent with every character of its text escaped as `\uXXXX`
 * (what `ensure_ascii` encoders do with non-ASCII text) the body is 8.25 MB (4.14 MB as UTF-8).
 * 9 MiB (9.44 MB) and 4,096 values leave room for indentation.
 */
export const HOT_STATE_JSON_BODY: Readonly<JsonBudget> = Object.freeze({
  maxBytes: 9 * 1024 * 1024,
  maxDepth: FIXED_SHAPE_DEPTH,
  maxValues: 4 * 1024,
});

/**
 * `POST /sessions/:id/prompt-metrics`: two prompts and a few numbers. A prompt of any length is
 * recorded (past 64,000 characters as not measured), so its size is bounded by the general limit
 * only.
 */
export const PROMPT_METRICS_JSON_BODY: Readonly<JsonBudget> = Object.freeze({
  maxBytes: Number.POSITIVE_INFINITY,
  maxDepth: FIXED_SHAPE_DEPTH,
  maxValues: 64,
});

/**
 * `POST /context/bootstrap`: up to 256 files (`MAX_BOOTSTRAP_FILES`) of `{ path, content, mime }`,
 * 1,027 values; the contents are any size, bounded by the general limit.
 */
export const BOOTSTRAP_JSON_BODY: Readonly<JsonBudget> = Object.freeze({
  maxBytes: Number.POSITIVE_INFINITY,
  maxDepth: FIXED_SHAPE_DEPTH,
  maxValues: 4 * 1024,
});

/**
 * `POST /threads/:jobId/:alias/items`. An item is stored in full before it is fitted to its
 * 350 KB budget (a tool's whole output, megabytes), so its size is bounded by the general limit
 * only. Its metadata carries a tool's input as the model wrote it: free-form, but never 64 levels
 * deep, and its outputs are text, so 100,000 values (at most 70 ms of parsing whatever they are)
 * is far past a real item.
 */
export const THREAD_ITEM_JSON_BODY: Readonly<JsonBudget> = Object.freeze({
  maxBytes: Number.POSITIVE_INFINITY,
  maxDepth: 64,
  maxValues: 100_000,
});

/**
 * `POST /requests/:requestId/session-blobs`, the JSON form: five fields, the blob one base64
 * string; up to `STOWAGE_BODY_LIMIT_MB` (the raw form takes larger blobs).
 */
export function sessionBlobJsonBody(bodyLimitBytes: number): Readonly<JsonBudget> {
  return Object.freeze({ maxBytes: bodyLimitBytes, maxDepth: FIXED_SHAPE_DEPTH, maxValues: 64 });
}
