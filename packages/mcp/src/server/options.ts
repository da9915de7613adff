import type { ArtifactStore, InternalUrlRouter } from "@stowage/artifacts";
import type { ContentStore, Logger } from "@stowage/core";
import type { ContentRegistry, HotStateReader } from "@stowage/hot-state";
import type { ThreadFeeds } from "@stowage/thread-items";
import type { UploadPolicy } from "@stowage/uploads";

/** The one session a server exposes: an `OpenedSession` of `createSessionFiles`, or any `{ sessionId, artifacts, router }`. */
export interface McpSession {
  sessionId: string;
  artifacts: ArtifactStore;
  router: InternalUrlRouter;
}

/**
 * What `upload_artifact` needs: the upload API of a Stowage server (`@stowage/uploads`' protocol:
 * `POST <apiBase>/agents/artifacts/upload-url`, a signed PUT, `POST …/complete`), a key of the
 * principal whose session the files go into, and the workspace files may come from.
 */
export interface McpUploads {
  /**
   * The directory files may be uploaded from (the agent's workspace). A path outside it, also
   * through a symbolic or a hard link, anything but a regular file, and `/` itself are refused:
   * the tool must not become a way to read the host.
   */
  root: string;
  /** The API's base URL (`http://127.0.0.1:3000`): the upload requests go there. */
  apiBase: string;
  /** An API key of the session's principal (`Authorization: Bearer`). */
  apiKey: string;
  /** The policy the tool describes and checks before sending. Default: the design document's (`createUploadPolicy()`); the server checks its own. */
  policy?: UploadPolicy;
  /** Makes the requests. Default the global `fetch`; in one process, a handler such as `(request) => app.fetch(request)`. */
  fetch?: typeof fetch;
}

/** Options of `createStowageMcpServer`. Everything given must belong to one principal. */
export interface StowageMcpServerOptions {
  session: McpSession;
  /** `blob:sha256:<hex>` resources: the principal's own view of the blobs (`createOwnedBlobStore`). */
  blobs?: ContentStore;
  /** `thread://<alias>` resources: the threads of job `<sessionId>` (a job's thread is keyed by its agent session). */
  threads?: ThreadFeeds;
  /** `content-ref://<sha256>` resources and the `artifacts_get` tool. */
  registry?: ContentRegistry;
  /** `hot-state://latest` and `hot-state://<version>`: the session's stored hot state (`createHotStateStore().reader`). */
  hotState?: HotStateReader;
  /** The `upload_artifact` tool; left out, the tool is not offered. */
  uploads?: McpUploads;
  /** Absolute paths (the data directory) replaced by `<data dir>` in every error that leaves. */
  redactPaths?: readonly string[];
  /** How often subscriptions to artifacts and agent outputs look for completion. Default {@link DEFAULT_POLL_INTERVAL_MS}. */
  pollIntervalMs?: number;
  /**
   * How `thread://` subscriptions learn of new items: `"notifier"` (default) listens on the
   * feeds' notifier, which must reach the processes that post (PostgreSQL LISTEN/NOTIFY);
   * `"poll"` looks at each watched thread every `pollIntervalMs`, for feeds whose notifier does
   * not (a memory notifier in another process than the poster).
   */
  threadUpdates?: "notifier" | "poll";
  /** Receives unexpected failures (messages only). Default core's `consoleLogger` (stderr, never a stdio transport's stdout). */
  logger?: Logger;
  /** The `serverInfo` name. Default `stowage`. */
  name?: string;
}

/** Default `pollIntervalMs`. */
export const DEFAULT_POLL_INTERVAL_MS = 500;
